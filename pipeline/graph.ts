import { FORMULATIONS, REST_BASED, sequenceFormulations, type Formulation } from '../core/model.js';

/**
 * The pipeline graph: every stage of DESIGN.md, in the order it runs, with what it is run
 * per and what it consumes. Stage names, the SLOT/SEL item flow (runner/flow.ts), progress
 * totals, and the stats funnel all derive from this one list; nothing else spells out the
 * stage order.
 *
 *   ingest ─→ gold ─┬→ parse → slot.decompose ─┬──────────────→ execute → verify ─→ emit   (slot)
 *                   │                          └→ sel.expand ──→ execute → verify ─→ emit   (sel)
 *                   └→ rest.synthesize ⇒ rest.dedup ══════════→ execute → verify ─┬→ emit   (rest)
 *                                                                                └⇒ chain.compose ─→ emit   (chain)
 *
 * A chain's first hop is a verified REST sample: its instance goes through REST's stages, and
 * chain.compose, once per database, makes its chains from them.
 */

export type StageKind =
  /** Once per instance, shared by every formulation it serves (its outcome is cached once). */
  | 'item'
  /** Once per instance and formulation (execute and verify of each sequence or call). */
  | 'path'
  /** Over a batch of instances of one database at a time (ingest reads a source; rest.synthesize prompts per batch). */
  | 'batch'
  /** Once per database, after all its instances are through the stages before it. */
  | 'barrier';

export interface GraphStage {
  name: string;
  kind: StageKind;
  /** The stages whose outputs it reads (the instance itself aside). */
  consumes: readonly string[];
  /** The formulations whose samples go through it. */
  serves: readonly Formulation[];
}

const SEQUENCES = sequenceFormulations(FORMULATIONS);

export const PIPELINE_GRAPH = [
  { name: 'ingest', kind: 'batch', consumes: [], serves: FORMULATIONS },
  { name: 'gold', kind: 'item', consumes: ['ingest'], serves: FORMULATIONS },
  { name: 'parse', kind: 'item', consumes: ['ingest'], serves: SEQUENCES },
  { name: 'slot.decompose', kind: 'item', consumes: ['parse'], serves: SEQUENCES },
  { name: 'sel.expand', kind: 'item', consumes: ['slot.decompose'], serves: ['sel'] },
  { name: 'rest.synthesize', kind: 'batch', consumes: ['gold'], serves: REST_BASED },
  { name: 'rest.dedup', kind: 'barrier', consumes: ['rest.synthesize'], serves: REST_BASED },
  { name: 'execute', kind: 'path', consumes: ['slot.decompose', 'sel.expand', 'rest.dedup'], serves: FORMULATIONS },
  { name: 'verify', kind: 'path', consumes: ['execute', 'gold'], serves: FORMULATIONS },
  { name: 'chain.compose', kind: 'barrier', consumes: ['rest.dedup', 'verify'], serves: ['chain'] },
  { name: 'emit', kind: 'barrier', consumes: ['verify'], serves: FORMULATIONS },
] as const satisfies readonly GraphStage[];

export type StageName = (typeof PIPELINE_GRAPH)[number]['name'];
export const STAGE_NAMES: readonly StageName[] = PIPELINE_GRAPH.map((stage) => stage.name);

const serving = (formulation: Formulation) =>
  PIPELINE_GRAPH.filter((stage) => (stage.serves as readonly Formulation[]).includes(formulation));

export function kindOf(stage: StageName): StageKind {
  return PIPELINE_GRAPH.find((s) => s.name === stage)!.kind;
}

/**
 * The stages a formulation's samples go through, in order, from ingest to verify: where a
 * rejection can happen (the stats funnel). Emit is left out: it rejects nothing.
 */
export function funnelOf(formulation: Formulation): StageName[] {
  return serving(formulation)
    .filter((stage) => stage.name !== 'emit')
    .map((stage) => stage.name);
}

/** The per-instance stages a formulation runs after ingest (the item flow, or REST's). */
export function itemStagesOf(formulation: Formulation): StageName[] {
  return funnelOf(formulation).filter((name) => name !== 'ingest');
}

/**
 * The SLOT/SEL flow's split: the item stages every sequence formulation shares (run once
 * per instance; a rejection there ends all of them) and, per formulation, the rest of its path.
 */
export const SHARED_STAGES: readonly StageName[] = PIPELINE_GRAPH.filter(
  (stage) => stage.kind === 'item' && SEQUENCES.every((f) => (stage.serves as readonly Formulation[]).includes(f)),
).map((stage) => stage.name);

export function pathStages(formulation: Formulation): StageName[] {
  return itemStagesOf(formulation).filter((name) => !SHARED_STAGES.includes(name));
}
