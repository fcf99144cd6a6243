import type { ToolCall } from '../core/model.js';

/**
 * A tool sequence's answer is the outputs no later call consumed, in call order: the
 * published samples' `answer_labels` are exactly those (every SLOT and SEL sample of BIRD
 * dev holds to it), so a model need not name its answer.
 */
export function unconsumedLabels(calls: readonly Pick<ToolCall, 'label' | 'arguments'>[]): string[] {
  return calls
    .filter((call, i) => !calls.slice(i + 1).some((later) => references(later.arguments, call.label)))
    .map((call) => call.label);
}

/** `"$LABEL$"` or `"$LABEL.field$"` anywhere in a value. */
function references(value: unknown, label: string): boolean {
  if (typeof value === 'string') return value === `$${label}$` || value.startsWith(`$${label}.`);
  if (Array.isArray(value)) return value.some((v) => references(v, label));
  if (value !== null && typeof value === 'object') return Object.values(value).some((v) => references(v, label));
  return false;
}
