import type {
  GoldResult,
  Instance,
  SelSequence,
  SlotSequence,
  ToolOutput,
  SequenceFormulation,
} from '../../core/model.js';
import type { Outcome } from '../../core/outcome.js';
import type { FormulationResult, ItemResult } from '../samples.js';
import type { Verification } from '../../verifiers/checks.js';
import { sequenceStageOf } from '../formulations.js';
import { pathStages, SHARED_STAGES, type StageName } from '../graph.js';
import type { ItemStage, StageContext } from '../stage.js';
import { OpaqueValueError } from './stage-runner.js';

/**
 * The SLOT/SEL item flow, walked from the pipeline graph (graph.ts) and independent of how
 * stages are run (the runner passes a `run` that adds caching and retries):
 *
 *   gold → parse → slot.decompose ─┬→ execute → verify                (slot)
 *                                  └→ sel.expand → execute → verify   (sel)
 *
 * The shared stages run once per item and a rejection there ends every formulation; then
 * each formulation walks its own path. What a stage is given is built by INPUTS from the
 * outputs before it: the one place that knows what each stage reads.
 */

export interface ExecuteInput {
  formulation: SequenceFormulation;
  sequence: SlotSequence;
}

/**
 * What running a sequence produced: its answer outputs, or the error (as plain data, so it
 * caches and crosses processes) that the execution check categorizes.
 */
export type ExecutionRecord =
  { ok: true; outputs: ToolOutput[] } | { ok: false; error: { name: string; message: string; code?: string } };

export interface VerifyInput {
  formulation: SequenceFormulation;
  sequence: SlotSequence | SelSequence;
  execution: ExecutionRecord;
  gold: GoldResult;
}

/** The item stages of the flow, by their graph names. The parsed query is opaque to the flow. */
export interface ItemStages<Q = unknown> {
  gold: ItemStage<{ instance: Instance }, GoldResult>;
  parse: ItemStage<{ sql: string }, Q>;
  'slot.decompose': ItemStage<{ query: Q }, SlotSequence>;
  execute: ItemStage<ExecuteInput, ExecutionRecord>;
  verify: ItemStage<VerifyInput, Verification>;
  /** The formulations' own stages (formulations.ts, `ownStage`), by name: SLOT sequence → theirs. */
  own: Record<string, OwnStage>;
}
type OwnStage = ItemStage<{ sequence: SlotSequence }, SlotSequence>;
type CommonStage = Exclude<keyof ItemStages, 'own'>;

/** The outputs of an item's stages so far, by stage. */
type Values = { instance: Instance } & Partial<Record<StageName, unknown>>;

/** What each stage is given, from the outputs before it; a formulation's own stage gets the SLOT sequence. */
const INPUTS: { [S in CommonStage]: (values: Values, formulation: SequenceFormulation) => unknown } = {
  gold: ({ instance }) => ({ instance }),
  parse: ({ instance }) => ({ sql: instance.sql }),
  'slot.decompose': (values) => ({ query: values.parse }),
  execute: (values, formulation) => ({ formulation, sequence: values[sequenceStageOf(formulation)] }),
  verify: (values, formulation) => ({
    formulation,
    sequence: values[sequenceStageOf(formulation)],
    execution: values.execute,
    gold: values.gold,
  }),
};
const ownInput = (values: Values) => ({ sequence: values['slot.decompose'] });

const isCommon = (name: StageName): name is CommonStage => name in INPUTS;
const stageOf = (stages: ItemStages, name: StageName) =>
  (isCommon(name) ? stages[name] : stages.own[name]) as ItemStage<unknown, unknown>;
const inputOf = (name: StageName, values: Values, formulation: SequenceFormulation) =>
  isCommon(name) ? INPUTS[name](values, formulation) : ownInput(values);

/** `key`: the stage's cache key where the item's plan (planItem) already computed it. */
export type RunStage = <I, O>(stage: ItemStage<I, O>, input: I, ctx: StageContext, key?: string) => Promise<Outcome<O>>;

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
  plan?: ItemPlan,
): Promise<ItemResult> {
  /** Runs `names` in order into `values`; the first rejection skips the rest (and `alsoSkipped`). */
  const walk = async (
    names: readonly StageName[],
    values: Values,
    formulation: SequenceFormulation,
    alsoSkipped: () => readonly StageName[],
  ): Promise<{ stage: StageName; category: string; message: string } | null> => {
    for (const [i, name] of names.entries()) {
      const key = plan?.stageKeys[formulation]?.[name];
      const outcome = await run(stageOf(stages, name), inputOf(name, values, formulation), ctx, key);
      hooks.stageDone(name, false);
      if (!outcome.ok) {
        for (const skipped of [...names.slice(i + 1), ...alsoSkipped()]) hooks.stageDone(skipped, true);
        return { stage: name, category: outcome.category, message: outcome.message };
      }
      values[name] = outcome.value;
    }
    return null;
  };

  const shared: Values = { instance };
  // The shared prefix; a rejection here ends every formulation (the input of INPUTS' shared
  // stages does not depend on the formulation: the first one stands for all).
  const sharedRejection = await walk(SHARED_STAGES, shared, formulations[0], () => formulations.flatMap(pathStages));
  if (sharedRejection) {
    return { instance, results: Object.fromEntries(formulations.map((f) => [f, { ok: false, ...sharedRejection }])) };
  }

  const finish = async (formulation: SequenceFormulation): Promise<FormulationResult> => {
    const values: Values = { ...shared };
    const rejection = await walk(pathStages(formulation), values, formulation, () => []);
    if (rejection) return { ok: false, ...rejection };
    const execution = values.execute as ExecutionRecord;
    return {
      ok: true,
      sequence: values[sequenceStageOf(formulation)] as SlotSequence,
      outputs: execution.ok ? execution.outputs : [],
      gold: values.gold as GoldResult,
      verification: values.verify as Verification,
    };
  };
  const finished = await Promise.all(formulations.map(finish));
  return { instance, results: Object.fromEntries(formulations.map((f, i) => [f, finished[i]])) };
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
  /**
   * Per formulation, every stage's key on its path (the shared stages' too): the keys the
   * run computes as it goes, so runItem hands them to `run` instead of hashing again.
   */
  stageKeys: Partial<Record<SequenceFormulation, Partial<Record<StageName, string>>>>;
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
  const keyOf = new Map<StageName, string>();
  const walk = (names: readonly StageName[], values: Values, formulation: SequenceFormulation): void => {
    for (const name of names) {
      const key = planner.keyOf(stageOf(stages, name), inputOf(name, values, formulation), ctx);
      keys.push(key);
      keyOf.set(name, key);
      values[name] = planner.standIn(key);
    }
  };
  try {
    const shared: Values = { instance };
    walk(SHARED_STAGES, shared, formulations[0]);
    const samples: ItemPlan['samples'] = {};
    const stageKeys: ItemPlan['stageKeys'] = {};
    for (const formulation of formulations) {
      walk(pathStages(formulation), { ...shared }, formulation);
      samples[formulation] = {
        gold: keyOf.get('gold')!,
        sequence: keyOf.get(sequenceStageOf(formulation))!,
        execute: keyOf.get('execute')!,
        verify: keyOf.get('verify')!,
      };
      const path = [...SHARED_STAGES, ...pathStages(formulation)];
      stageKeys[formulation] = Object.fromEntries(path.map((name) => [name, keyOf.get(name)!]));
    }
    return { samples, stageKeys, keys };
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
