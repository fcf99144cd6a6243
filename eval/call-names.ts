import type { ToolCall } from '../core/model.js';
import { relabel } from './metrics/alignment.js';

/**
 * How a model names the output of a call it made, so that a later call can use it: one
 * convention for every provider and both modes, with labels optional and never required.
 *
 * - A call's output is named by the call's `label` if the model gave one (in the text, or as
 *   an argument of a native call), else by the id its tool call carries (`call_0`,
 *   `call_abc123`), else `call_<n>`, n its position among the attempt's calls from 0.
 * - A later call refers to it as `"$<name>$"` (`"$<name>.<field>$"` for a field): by label,
 *   by id, or by position `"$call_<n>$"` (what a model can write before a provider has given
 *   its parallel calls their ids). Names are never reused: a clash gets a fresh `call_<n>`,
 *   which a ReAct observation tells the model as the output's handle.
 *
 * `CallNames` gives each call its label (what the runtime and the metrics read; the model's
 * id is kept beside it) and rewrites references to labels. A reference it cannot resolve is
 * left as written: the runtime then reports `bad_reference`, the model's error.
 */

/** A call as read off a reply (names still the model's). */
export interface ReadCall {
  name: string;
  arguments: Record<string, unknown>;
  label?: string;
  id?: string;
}

/** A call ready to run: its label assigned, its references resolved; the model's id kept for the record. */
export type NamedCall = ToolCall & { id?: string };

const NAME = /^[A-Za-z_][\w-]*$/;

export class CallNames {
  /** Every name a model may use for an output → the label it resolves to. */
  private readonly aliases = new Map<string, string>();
  private readonly taken = new Set<string>();
  private calls = 0;

  /** `reserved`: labels already defined, e.g. the starting tables (`starting_table_var`). */
  constructor(reserved: readonly string[] = []) {
    for (const label of reserved) {
      this.taken.add(label);
      this.aliases.set(label, label);
    }
  }

  /** One reply's calls, in order: the calls of one reply may refer to one another. */
  name(calls: readonly ReadCall[]): NamedCall[] {
    const first = this.calls;
    this.calls += calls.length;
    const labels = calls.map((call, k) => this.claim([call.label, call.id, `call_${first + k}`]));
    // Labels and ids first, positions only where no label or id has the name.
    calls.forEach((call, k) => {
      for (const name of [call.label, call.id])
        if (name !== undefined && !this.aliases.has(name)) this.aliases.set(name, labels[k]);
    });
    calls.forEach((_, k) => {
      if (!this.aliases.has(`call_${first + k}`)) this.aliases.set(`call_${first + k}`, labels[k]);
    });
    return calls.map((call, k) => ({
      name: call.name,
      arguments: relabel(call.arguments, this.aliases) as Record<string, unknown>,
      label: labels[k],
      ...(call.id !== undefined ? { id: call.id } : {}),
    }));
  }

  /**
   * A call that failed has no output: its names are free again, so that the corrected call
   * (ReAct) can take the label the model meant, and later calls' references reach it.
   */
  forget(label: string): void {
    this.taken.delete(label);
    for (const [alias, target] of this.aliases) if (target === label) this.aliases.delete(alias);
  }

  /** The label a name the model used stands for (a final answer's), or undefined. */
  labelOf(name: string): string | undefined {
    return this.aliases.get(name);
  }

  /** The first candidate that is a usable, untaken name; else a fresh `call_<n>`. */
  private claim(candidates: readonly (string | undefined)[]): string {
    let label = candidates.find((c): c is string => c !== undefined && NAME.test(c) && !this.taken.has(c));
    for (let n = this.calls; label === undefined; n++) if (!this.taken.has(`call_${n}`)) label = `call_${n}`;
    this.taken.add(label);
    return label;
  }
}
