import { recordedOutputs } from '../eval/answer-labels.js';
import type { EvalItem } from '../eval/dataset.js';
import { openEpisode, shown, type EnvironmentOptions } from '../eval/environment.js';
import { canonicalJson } from '../core/hash.js';
import type { DatabaseInfo, ToolCall } from '../core/model.js';
import { plainOutput } from '../pipeline/emit.js';
import { selToSlotCall } from '../runtime/sel/execute.js';
import { keysForInitialization } from '../runtime/slot/specs.js';
import type { LiveApiBenchPandas } from '../config/schema.js';
import { pandasReading, type PandasReading } from './published/pandas-reading.js';
import { negativeOf, rememberingCalls, type NegativeVerdict, type TriedCalls } from './negatives.js';

/**
 * What an export needs of the live tools for one sample: each gold call's output as a
 * conversation shows it, and for a question that gets a negative, the tools its negative
 * loses (negatives.ts). The answer's outputs are the sample's own recorded ones (verification computed
 * them, whole): only the calls a later call consumes are run, for their first rows. So REST
 * runs nothing, and SEL, which runs as the SLOT calls it binds to, shows the outputs its
 * question's SLOT sample ran (`SharedOutputs`).
 */

export interface GoldRun {
  /** Each gold call's output as plain JSON (value, values or records), at most `rows` rows (fewer for wide rows: `preview`). */
  outputs: unknown[];
  /**
   * SLOT/SEL: the keys of the sample's starting tables, as its database names them (a
   * database's tools list every table's keys and every sample's derived keys: these tell the
   * sample's own from the rest). Empty for REST.
   */
  startKeys: string[];
  /** The question's negative, when it gets one: the tools it loses, or why it has none. */
  negative?: NegativeVerdict;
  /** SLOT/SEL, when the Live API-Bench format is written: what its runtime's pandas makes of the sample's data. */
  pandas?: PandasReading;
}

/** What a gold run computes beside the outputs: the question's negative, the Live API-Bench runtime's reading of the data (for the pandas it runs on). */
export interface GoldRunNeeds {
  negative: boolean;
  pandas?: LiveApiBenchPandas;
}

/** A call's output failed where verification had it succeed: the dataset and its databases disagree. */
export class GoldCallError extends Error {
  constructor(
    readonly category: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The gold-call outputs an export's runs share, by what gives each: the database, the starting
 * tables and the calls up to it, in SLOT's terms. SEL runs as the SLOT calls it binds to
 * (runtime/sel), so a SEL sample shows its question's SLOT outputs without running anything,
 * and questions over the same starting table often begin with the same calls. Outputs that
 * were given only: a failure is worded in the failing sample's own tool names.
 */
export type SharedOutputs = Map<string, unknown>;

export async function runGold(
  item: EvalItem,
  environment: () => Promise<EnvironmentOptions>,
  needs: GoldRunNeeds,
  rows: number,
  tried: TriedCalls = new Map(),
  shared: SharedOutputs = new Map(),
): Promise<GoldRun> {
  const withNegative = needs.negative;
  const recorded = recordedOutputs(item);
  const sequence = item.initialization.length > 0;
  const unrecorded = item.goldCalls.some((_, i) => !recorded.has(i));
  const env = sequence || unrecorded || withNegative ? await environment() : undefined;
  const db = env?.databases.get(item.db);
  const keys = sequence && db ? sharedKeys(item, db) : [];
  const known = (i: number) => keys[i] !== undefined && shared.has(keys[i]);
  // Every call not recorded runs in the episode (a call reads the outputs of those before it there), or none does.
  const running = item.goldCalls.some((_, i) => !recorded.has(i) && !known(i));
  const episode = running || withNegative ? await openEpisode(item, env!) : undefined;
  const outputs: unknown[] = [];
  for (const [i, call] of item.goldCalls.entries()) {
    if (recorded.has(i)) {
      // A chain's later hop takes its value from all of the response before it: shown whole (conversation.ts bounds it).
      const bridged = item.formulation === 'chain' && i < item.goldCalls.length - 1;
      outputs.push(bridged ? recorded.get(i) : preview(recorded.get(i), rows));
      continue;
    }
    if (!running) {
      outputs.push(shared.get(keys[i]!));
      continue;
    }
    const step = await episode!.call(call);
    if (!step.ok)
      throw new GoldCallError(`gold_calls:${step.kind}`, `${call.name} (${call.label}) fails now: ${step.error}`);
    if ('status' in step.output) throw new GoldCallError('gold_calls:rest', `${call.name} is not the sample's answer`);
    const output = preview(plainOutput(step.output), rows);
    const key = keys[i];
    if (key !== undefined) shared.set(key, output);
    outputs.push(output);
  }
  const startKeys = sequence && db ? keysForInitialization(db, item.initialization).map((k) => k.key) : [];
  const pandas =
    needs.pandas && sequence && db
      ? {
          pandas: await pandasReading(item, {
            db,
            executor: env!.executor,
            pool: env!.pool,
            timeoutMs: env!.timeoutMs,
            pandas: needs.pandas,
          }),
        }
      : {};
  if (!withNegative) return { outputs, startKeys, ...pandas };
  const calls = item.formulation === 'rest' ? rememberingCalls(episode!, item.db, tried) : episode!;
  return { outputs, startKeys, ...pandas, negative: await negativeOf(item, calls, db) };
}

/**
 * Each gold call's key in SharedOutputs (SLOT and SEL; none for REST, or for a call SEL does not
 * bind): the database's file and content, the starting tables and the calls up to it as SLOT calls.
 */
function sharedKeys(item: EvalItem, db: DatabaseInfo): (string | undefined)[] {
  let calls: ToolCall[];
  try {
    calls =
      item.formulation === 'sel'
        ? item.goldCalls.map((call) => selToSlotCall(call, item.bindings ?? {}))
        : item.goldCalls;
  } catch {
    return [];
  }
  // Canonical: a bound call names its arguments in another order than the SLOT call it is.
  return calls.map((_, i) => canonicalJson([db.path, db.fingerprint, item.initialization, calls.slice(0, i + 1)]));
}

/**
 * The most characters of JSON a conversation shows of one tool output: a row of a wide joined
 * table runs to kilobytes, and a SLOT conversation shows one such table per call. Fewer rows
 * are shown until the output fits, never none.
 */
export const MAX_OUTPUT_CHARS = 1_500;

/** An output's first `rows` rows (or values), fewer while they exceed MAX_OUTPUT_CHARS, at least one. */
export function preview(value: unknown, rows: number): unknown {
  let shownRows = shown(value, rows);
  for (let n = rows - 1; n >= 1 && JSON.stringify(shownRows).length > MAX_OUTPUT_CHARS; n--)
    shownRows = shown(value, n);
  return shownRows;
}
