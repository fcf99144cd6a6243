import { lazy } from '../core/lazy.js';
import type {
  DatabaseInfo,
  KeyDescription,
  SelBinding,
  SelSequence,
  SlotSequence,
  ToolOutput,
  ToolPool,
  ToolSpec,
  SequenceFormulation,
} from '../core/model.js';
import type { SqlExecutor } from '../runtime/sql/executor.js';
import { selToolSpecs } from '../runtime/sel/specs.js';
import { keysForInitialization, keysForSequenceOrStart, slotToolSpecs } from '../runtime/slot/specs.js';
import type { DatabaseEmitInput, EmittedFile } from './emit-artifact.js';
import { emitChainDatabase } from './emit-chain.js';
import { emitRestDatabase } from './emit-rest.js';
import { emitSequences, type SequenceEmit } from './emit.js';
import type { StageName } from './graph.js';
import type { ItemStage } from './stage.js';
import { expandStage } from './stages/expand.js';
import type { ToolRegistry } from './tool-registry.js';

/**
 * The formulations, each as everything it is made of: the flow it runs through, what its
 * samples and published tools look like, how its sequences run. Stages are in the pipeline
 * graph (graph.ts); the SLOT/SEL item flow, execute, verify and emit read the rest from here,
 * so that a formulation's particulars are in one entry instead of `if (formulation === …)`
 * across the stages.
 */

export interface RunOptions {
  timeoutMs: number;
  pool: ToolPool;
}

/** What every formulation has. */
interface FormulationBasics {
  /** Its name in prose and tables. */
  title: string;
  /** Its paragraph in the dataset card (a Markdown list item). */
  card: string;
}

/** A tool-sequence formulation: run by the SLOT/SEL item flow (runner/flow.ts). */
export interface SequenceFormulationDef extends FormulationBasics, SequenceEmit {
  flow: 'sequence';
  /**
   * Its own item stage, if its sequence is not SLOT's: it turns the SLOT sequence into the
   * formulation's (SEL: sel.expand binds the categorical arguments).
   */
  ownStage?: ItemStage<{ sequence: SlotSequence }, SlotSequence>;
  /** Runs a sequence against the live tools (runtimes load when first used). */
  execute(sequence: SlotSequence, db: DatabaseInfo, executor: SqlExecutor, options: RunOptions): Promise<ToolOutput[]>;
  /** The specs of the tools among `called` that the sequence may call: the format check's universe. */
  tools(sequence: SlotSequence, registry: ToolRegistry, called: ReadonlySet<string>): ToolSpec[];
}

/** REST: its own stages and runner (runner/rest.ts); chain: made of REST's samples (stages/chain-compose.ts). */
export interface RestFormulationDef extends FormulationBasics {
  flow: 'rest' | 'chain';
  emit(input: DatabaseEmitInput): Promise<EmittedFile[]>;
}

const slotRuntime = lazy(() => import('../runtime/slot/execute.js'));
const selRuntime = lazy(() => import('../runtime/sel/execute.js'));

const slot: SequenceFormulationDef = {
  flow: 'sequence',
  title: 'SLOT',
  card: `- **SLOT** — a small pool of generic data tools (\`filter_data\`, \`sort_data\`, \`retrieve_data\`,
  \`aggregate_data\`, \`group_data_by\`, \`select_unique_values\`, \`transform_data\`, and extensions such
  as \`union_data\`, \`combine_data\`, \`join_data\` and \`calculate\`). The model fills the slots and chains calls by
  label: \`"$LABEL$"\` stands for the output of an earlier call. Column keys are \`<table>_<column>\`.`,
  execute: async (sequence, db, executor, options) =>
    (await slotRuntime()).executeSequence(sequence, db, executor, options),
  // A sequence that does not even compile gets the starting keys only; the format check says what is wrong with it.
  tools: (sequence, registry, called) =>
    registry.slotTools(keysForSequenceOrStart(registry.db, sequence, registry.pool), called),
  sampleFields: () => ({}),
  ownKeys: (db, sequence, pool) => keysForSequenceOrStart(db, sequence, pool),
  databaseTools: (_samples, keys, pool) => slotToolSpecs(keys, pool),
};

const sel: SequenceFormulationDef = {
  flow: 'sequence',
  title: 'SEL',
  card: `- **SEL** — derived from SLOT: every categorical argument is bound into a tool of its own
  (\`select_data_equal_to\`, \`sort_data_descending\`, …) and every column has a getter
  (\`get_<table>_<column>\`); each sample lists its own tool universe.`,
  ownStage: expandStage,
  execute: async (sequence, db, executor, options) =>
    (await selRuntime()).executeSelSequence(sequence as SelSequence, db, executor, options),
  // A called name outside the sequence's universe is left out, hence `format:unknown_tool`.
  tools: (sequence, registry, called) =>
    Object.keys((sequence as SelSequence).bindings)
      .filter((name) => called.has(name))
      .map((name) => registry.selTool(sequence as SelSequence, name)),
  sampleFields: (sequence) => ({ tools: Object.keys((sequence as SelSequence).bindings) }),
  ownKeys: (db, sequence) => [
    ...keysForInitialization(db, sequence.initialization),
    ...(sequence as SelSequence).derivedKeys,
  ],
  databaseTools: selToolsOfDatabase,
  runtimeBindings: selRuntimeBindings,
};

const rest: RestFormulationDef = {
  flow: 'rest',
  title: 'REST',
  card: `- **REST** — one GET endpoint per question (equivalent endpoints merged), with typed query
  parameters for the literals a user would vary; each sample is one call of its endpoint,
  executed over HTTP against the live server, and \`output_after_executing_api\` is the response.`,
  emit: emitRestDatabase,
};

const chain: RestFormulationDef = {
  flow: 'chain',
  title: 'Chain',
  card: `- **Chain** — 2 or 3 calls of the REST endpoints, each after the first given a value of the
  one before it (a field as it is, its first, largest, smallest or alphabetically first or last
  value, a date's year or month); one question asks for the last call's answer. Each chain's
  meaning is one SQL statement (\`query\`), and the calls made one by one give what it gives on the
  database and on its perturbed variants.`,
  emit: emitChainDatabase,
};

export const FORMULATION_DEFS = { slot, sel, rest, chain } as const satisfies {
  [F in SequenceFormulation]: SequenceFormulationDef;
} & {
  rest: RestFormulationDef;
  chain: RestFormulationDef;
};

export function sequenceDef(formulation: SequenceFormulation): SequenceFormulationDef {
  return FORMULATION_DEFS[formulation];
}

/** The item stage whose output is a formulation's sequence. */
export function sequenceStageOf(formulation: SequenceFormulation): StageName {
  return sequenceDef(formulation).ownStage?.name ?? 'slot.decompose';
}

/** The formulations' own item stages, by name. */
export function ownStages(): Record<string, ItemStage<{ sequence: SlotSequence }, SlotSequence>> {
  return Object.fromEntries(
    Object.values(FORMULATION_DEFS).flatMap((def) =>
      def.flow === 'sequence' && def.ownStage ? [[def.ownStage.name, def.ownStage]] : [],
    ),
  );
}

/** A database's artifacts of every formulation of the run. */
export async function emitDatabase(input: DatabaseEmitInput): Promise<EmittedFile[]> {
  const files: EmittedFile[] = [];
  for (const formulation of input.formulations) {
    const def = FORMULATION_DEFS[formulation];
    files.push(
      ...(def.flow !== 'sequence'
        ? await def.emit(input)
        : await emitSequences(input, formulation as SequenceFormulation, def)),
    );
  }
  return files;
}

/** The union of the accepted samples' SEL tools, by name (first binding wins), over the database's keys, sorted. */
function selToolsOfDatabase(sequences: readonly SlotSequence[], keys: KeyDescription[], pool: ToolPool): ToolSpec[] {
  const bindings: Record<string, SelBinding> = {};
  for (const sequence of sequences) {
    for (const [name, binding] of Object.entries((sequence as SelSequence).bindings)) bindings[name] ??= binding;
  }
  return selToolSpecs(bindings, keys, pool).sort((a, b) => (a.function.name < b.function.name ? -1 : 1));
}

/**
 * What each SEL tool name of a database's samples stands for, so that a live runtime (nl2api
 * eval, anyone's) can run SEL calls as the SLOT calls they bind: `bindings` by name (the first
 * sample's, in sample order), and under `overrides` the few names a sample binds otherwise
 * (names are allocated per sample, so two samples may give one name to different bindings).
 */
export interface SelRuntimeBindings {
  bindings: Record<string, SelBinding>;
  overrides: Record<string, Record<string, SelBinding>>;
}

function selRuntimeBindings(samples: readonly { id: string; sequence: SlotSequence }[]): SelRuntimeBindings {
  const bindings: Record<string, SelBinding> = {};
  const overrides: Record<string, Record<string, SelBinding>> = {};
  for (const { id, sequence } of samples) {
    for (const [name, binding] of Object.entries((sequence as SelSequence).bindings)) {
      bindings[name] ??= binding;
      if (JSON.stringify(bindings[name]) !== JSON.stringify(binding)) (overrides[id] ??= {})[name] = binding;
    }
  }
  return { bindings: Object.fromEntries(Object.entries(bindings).sort(([a], [b]) => (a < b ? -1 : 1))), overrides };
}

/** A SEL sample's bindings, from its database's published runtime bindings and its tool names. */
export function selSampleBindings(
  published: SelRuntimeBindings,
  sampleId: string,
  tools: readonly string[],
): Record<string, SelBinding> {
  const own = published.overrides[sampleId] ?? {};
  return Object.fromEntries(
    tools.flatMap((name) => {
      const binding = own[name] ?? published.bindings[name];
      return binding ? [[name, binding]] : [];
    }),
  );
}
