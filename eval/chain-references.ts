import type { SqlValue, ToolCall } from '../core/model.js';
import { TRANSFORM_KINDS, transformOf, type TransformKind } from '../generators/chain/transforms.js';
import { answerTable } from '../verifiers/rest.js';
import type { ChainHop } from './dataset.js';

/**
 * How a chain attempt carries one response into a later call without reading it first (direct
 * invocation writes every call at once): an argument `"$<handle>.<field>$"` is that field's
 * value in the earlier response, which must hold exactly one; `"$<handle>.<field>|<transform>$"`
 * makes one value of the field's values over the response's rows with one of the chain
 * formulation's transforms (transforms.ts: the same code that made and verified the chains).
 * Handles are call-names.ts's labels. An agent that reads the response (ReAct) may pass the
 * value itself instead. A reference that gives no single value is the model's error, told it
 * as a tool error.
 */

const REFERENCE = /^\$([^.$|]+)\.([^$|]+)(?:\|([^$]+))?\$$/;

/** An earlier response's body, by the label of the call that got it. */
export type ResponsesByLabel = ReadonlyMap<string, unknown>;

export type Resolved = { ok: true; call: ToolCall } | { ok: false; error: string };

export function resolveReferences(call: ToolCall, responses: ResponsesByLabel): Resolved {
  const args: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(call.arguments)) {
    const reference = typeof value === 'string' ? REFERENCE.exec(value) : null;
    if (!reference) {
      args[name] = value;
      continue;
    }
    const resolved = referencedValue(reference[1], reference[2], reference[3], responses);
    if (typeof resolved === 'object' && resolved !== null && 'error' in resolved)
      return { ok: false, error: `${name}: ${resolved.error}` };
    args[name] = resolved;
  }
  return { ok: true, call: { ...call, arguments: args } };
}

function referencedValue(
  label: string,
  field: string,
  transformName: string | undefined,
  responses: ResponsesByLabel,
): SqlValue | { error: string } {
  if (!responses.has(label)) return { error: `"${label}" names no earlier successful call` };
  const kind = (transformName ?? 'value').trim();
  if (!(TRANSFORM_KINDS as readonly string[]).includes(kind))
    return { error: `unknown transform "${kind}" (one of ${TRANSFORM_KINDS.filter((k) => k !== 'value').join(', ')})` };
  // Read as an agent's answer is read (verifiers/rest.ts): a response is one object, null, or a list of them.
  const table = answerTable(responses.get(label) ?? null);
  const column = table ? table.columns.indexOf(field) : -1;
  if (table && table.rows.length > 0 && column < 0)
    return { error: `the response of "${label}" has no field "${field}"` };
  const values = table ? table.rows.map((row) => row[column]) : [];
  const value = transformOf(kind as TransformKind).apply(values);
  if (value === undefined)
    return {
      error: `${kind} makes no single value of the ${values.length} value(s) of "${field}" in the response of "${label}"`,
    };
  return value;
}

/**
 * A chain's calls as one plan, written before any response is read: each bridged argument as
 * the reference that carries it (its sample's `"$HOP<k>.<field>$"` bind and transform), hop k's
 * response named `handleOf(k)`.
 */
export function plannedChain(
  calls: readonly ToolCall[],
  hops: readonly ChainHop[],
  handleOf: (hop: number) => string,
): ToolCall[] {
  return calls.map((call, i) => {
    const hop = hops[i];
    if (!hop) return call;
    const args = { ...call.arguments };
    for (const [param, bind] of Object.entries(hop.binds)) {
      const match = /^\$HOP(\d+)\.(.+)\$$/.exec(bind);
      if (!match) continue;
      const transform = hop.transform && hop.transform !== 'value' ? `|${hop.transform}` : '';
      args[param] = `$${handleOf(Number(match[1]))}.${match[2]}${transform}$`;
    }
    return { ...call, arguments: args };
  });
}
