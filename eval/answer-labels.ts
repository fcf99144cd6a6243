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

/** A sample's answer labels: as its published line names them, else the calls no later call consumes. */
export function answerLabelsOf(item: {
  published: Readonly<Record<string, unknown>>;
  goldCalls: readonly Pick<ToolCall, 'label' | 'arguments'>[];
}): string[] {
  return (item.published.answer_labels as string[] | undefined) ?? unconsumedLabels(item.goldCalls);
}

/**
 * A published sample's recorded outputs, by the index of the gold call that gave each: a
 * sequence's answer calls (its answer labels: one output, or one part each), a REST call's
 * response, every chain hop's response.
 */
export function recordedOutputs(item: {
  formulation: string;
  published: Readonly<Record<string, unknown>>;
  goldCalls: readonly Pick<ToolCall, 'label' | 'arguments'>[];
}): Map<number, unknown> {
  const answer = item.published.output_after_executing_api;
  const parts: unknown[] = Array.isArray(answer) ? answer : [];
  if (item.formulation === 'rest') return new Map(item.goldCalls.length ? [[item.goldCalls.length - 1, answer]] : []);
  if (item.formulation === 'chain') return new Map(parts.map((response, i) => [i, response]));
  const labels = answerLabelsOf(item);
  const indexOf = (label: string) => item.goldCalls.findIndex((call) => call.label === label);
  if (labels.length === 1) return new Map([[indexOf(labels[0]), answer]]);
  return new Map(
    labels.flatMap((label, i): [number, unknown][] => (i < parts.length ? [[indexOf(label), parts[i]]] : [])),
  );
}

/** `"$LABEL$"` or `"$LABEL.field$"` anywhere in a value. */
function references(value: unknown, label: string): boolean {
  if (typeof value === 'string') return value === `$${label}$` || value.startsWith(`$${label}.`);
  if (Array.isArray(value)) return value.some((v) => references(v, label));
  if (value !== null && typeof value === 'object') return Object.values(value).some((v) => references(v, label));
  return false;
}
