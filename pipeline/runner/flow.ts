import type { SequenceFormulation } from '../formulation.js';
import type { GoldResult, Instance, SelSequence, SlotSequence, ToolOutput } from '../../core/model.js';
import type { Outcome } from '../../core/outcome.js';
import type { FormulationResult, ItemResult, Verification } from '../samples.js';
import type { ItemStage, StageContext, StageName } from '../stage.js';
import { OpaqueValueError } from './stage-runner.js';

/**
 * The per-instance stage graph, independent of how stages are run (the runner passes a
 * `run` that adds caching and retries):
 *
 *   gold → parse → slot.decompose ─┬→ execute → verify                (slot)
 *                                  └→ sel.expand → execute → verify   (sel)
 *
 * A rejection ends the item for every formulation that depends on it: a gold or parse
 * rejection is a rejection of both slot and sel, recorded with its stage.
 */

export type ExecuteInput =
  | { formulation: 'slot'; sequence: SlotSequence }
  | { formulation: 'sel'; sequence: SelSequence };

/**
 * What running a sequence produced: its answer outputs, or the error (as plain data, so it
 * caches and crosses processes) that the execution check categorizes.
 */
export type ExecutionRecord =
  | { ok: true; outputs: ToolOutput[] }
  | { ok: false; error: { name: string; message: string; code?: string } };

export interface VerifyInput {
  formulation: SequenceFormulation;
  sequence: SlotSequence | SelSequence;
  execution: ExecutionRecord;
  gold: GoldResult;
}

/** The item stages the flow needs. The parsed query is opaque to the flow. */
export interface ItemStages<Q = unknown> {
  gold: ItemStage<{ instance: Instance }, GoldResult>;
  parse: ItemStage<{ sql: string }, Q>;
  decompose: ItemStage<{ query: Q }, SlotSequence>;
  expand: ItemStage<{ sequence: SlotSequence }, SelSequence>;
  execute: ItemStage<ExecuteInput, ExecutionRecord>;
  verify: ItemStage<VerifyInput, Verification>;
}

export type RunStage = <I, O>(stage: ItemStage<I, O>, input: I, ctx: StageContext) => Promise<Outcome<O>>;

/** The stages a formulation goes through after slot.decompose. */
export function pathStages(formulation: SequenceFormulation): StageName[] {
  return formulation === 'sel' ? ['sel.expand', 'execute', 'verify'] : ['execute', 'verify'];
}
export const SHARED_STAGES: StageName[] = ['gold', 'parse', 'slot.decompose'];

export interface FlowHooks {
  /** A stage finished for this item, or will never run for it (`skipped`). */
  stageDone(stage: StageName, skipped: boolean): void;
}

export async function runItem(
  instance: Instance,
  formulations: readonly SequenceFormulation[],
  stages: ItemStages,
  ctx: StageContext,
  run: RunStage,
  hooks: FlowHooks,
): Promise<ItemResult> {
  const results: ItemResult['results'] = {};
  const rejectAll = (stage: StageName, outcome: { category: string; message: string }): ItemResult => {
    for (const f of formulations) {
      results[f] = { ok: false, stage, category: outcome.category, message: outcome.message };
      for (const s of pathStages(f)) hooks.stageDone(s, true);
    }
    return { instance, results };
  };

  // The shared prefix; a rejection here ends every formulation.
  const gold = await run(stages.gold, { instance }, ctx);
  hooks.stageDone('gold', false);
  if (!gold.ok) {
    hooks.stageDone('parse', true);
    hooks.stageDone('slot.decompose', true);
    return rejectAll('gold', gold);
  }
  const query = await run(stages.parse, { sql: instance.sql }, ctx);
  hooks.stageDone('parse', false);
  if (!query.ok) {
    hooks.stageDone('slot.decompose', true);
    return rejectAll('parse', query);
  }
  const slot = await run(stages.decompose, { query: query.value }, ctx);
  hooks.stageDone('slot.decompose', false);
  if (!slot.ok) return rejectAll('slot.decompose', slot);

  // The formulations are independent from here on.
  const finish = async (formulation: SequenceFormulation): Promise<FormulationResult> => {
    const remaining = pathStages(formulation);
    const step = async <I, O>(stage: ItemStage<I, O>, input: I): Promise<Outcome<O>> => {
      const outcome = await run(stage, input, ctx);
      hooks.stageDone(remaining.shift()!, false);
      if (!outcome.ok) for (const s of remaining.splice(0)) hooks.stageDone(s, true);
      return outcome;
    };
    let execInput: ExecuteInput;
    if (formulation === 'sel') {
      const sel = await step(stages.expand, { sequence: slot.value });
      if (!sel.ok) return { ok: false, stage: 'sel.expand', category: sel.category, message: sel.message };
      execInput = { formulation, sequence: sel.value };
    } else {
      execInput = { formulation, sequence: slot.value };
    }
    const execution = await step(stages.execute, execInput);
    if (!execution.ok) return { ok: false, stage: 'execute', category: execution.category, message: execution.message };
    const verification = await step(stages.verify, {
      formulation,
      sequence: execInput.sequence,
      execution: execution.value,
      gold: gold.value,
    });
    if (!verification.ok) {
      return { ok: false, stage: 'verify', category: verification.category, message: verification.message };
    }
    return {
      ok: true,
      sequence: execInput.sequence,
      outputs: execution.value.ok ? execution.value.outputs : [],
      gold: gold.value,
      verification: verification.value,
    };
  };
  const finished = await Promise.all(formulations.map(finish));
  formulations.forEach((f, i) => (results[f] = finished[i]));
  return { instance, results };
}

/** What planning needs from the runner: keys as the runner computes them, and stand-ins for outputs. */
export interface KeyPlanner {
  keyOf<I, O>(stage: ItemStage<I, O>, input: I, ctx: StageContext): string;
  standIn(key: string): object;
}

/** Where an accepted sample's parts are stored: the cache keys of the stage outcomes it is made of. */
export interface SampleKeys {
  gold: string;
  /** slot.decompose (slot) or sel.expand (sel). */
  sequence: string;
  execute: string;
  verify: string;
}

export interface ItemPlan {
  /** Per formulation: the stage keys it gets when every stage before verify accepts. */
  samples: Partial<Record<SequenceFormulation, SampleKeys>>;
  /** Every stage key on the way, in flow order (to read ahead). */
  keys: string[];
}

/**
 * The cache keys an item's stages would have if every stage accepted, computed without
 * running or loading anything: keys chain by the upstream key (run-store.ts), so each
 * stage's input can be a stand-in for its upstream output. The verify key of a formulation
 * thus determines everything its result depends on, and the keys before it say where an
 * accepted sample's parts are stored. Undefined when a stage's key needs to
 * look inside an upstream value (the item then simply runs).
 */
export function planItem(
  instance: Instance,
  formulations: readonly SequenceFormulation[],
  stages: ItemStages,
  ctx: StageContext,
  planner: KeyPlanner,
): ItemPlan | undefined {
  const keys: string[] = [];
  const step = <I, O>(stage: ItemStage<I, O>, input: I): O => {
    const key = planner.keyOf(stage, input, ctx);
    keys.push(key);
    return planner.standIn(key) as O;
  };
  try {
    const last = () => keys[keys.length - 1];
    const gold = step(stages.gold, { instance });
    const goldKey = last();
    const query = step(stages.parse, { sql: instance.sql });
    const slot = step(stages.decompose, { query });
    const slotKey = last();
    const samples: ItemPlan['samples'] = {};
    for (const formulation of formulations) {
      const execInput: ExecuteInput =
        formulation === 'sel'
          ? { formulation, sequence: step(stages.expand, { sequence: slot }) }
          : { formulation, sequence: slot };
      const sequence = formulation === 'sel' ? last() : slotKey;
      const execution = step(stages.execute, execInput);
      const execute = last();
      step(stages.verify, { formulation, sequence: execInput.sequence, execution, gold });
      samples[formulation] = { gold: goldKey, sequence, execute, verify: last() };
    }
    return { samples, keys };
  } catch (error) {
    if (error instanceof OpaqueValueError) return undefined;
    throw error;
  }
}

/**
 * The stages an item's results went through, by formulation order: the shared prefix once,
 * then each formulation's path up to the stage that decided it. A whole item served from
 * the cache counts these as cache hits.
 */
export function stagesReached(
  results: ItemResult['results'],
  formulations: readonly SequenceFormulation[],
): StageName[] {
  const reached: StageName[] = [];
  let shared = 0;
  const path = new Map<SequenceFormulation, StageName[]>();
  for (const f of formulations) {
    const result = results[f];
    const order = [...SHARED_STAGES, ...pathStages(f)];
    const last = !result || result.ok ? order.length - 1 : order.indexOf(result.stage as StageName);
    shared = Math.max(shared, Math.min(last + 1, SHARED_STAGES.length));
    path.set(f, order.slice(SHARED_STAGES.length, last + 1));
  }
  reached.push(...SHARED_STAGES.slice(0, shared));
  for (const f of formulations) reached.push(...path.get(f)!);
  return reached;
}
