import type {
  DatabaseInfo,
  GoldResult,
  Instance,
  SelSequence,
  SlotSequence,
  ToolSpec,
  Verdict,
} from '../core/model.js';
import type { SynthesizedEndpoint } from '../runtime/rest/spec.js';
import { checkDependencies, type KeyRun } from './dependencies.js';
import { checkDifferential, type VariantRun } from './differential.js';
import { checkExecution, type ExecutionResult } from './execution.js';
import { checkFormat } from './format.js';
import type { AnswerJudge } from './judge.js';
import { checkRestExecution, checkRestFormat, checkRestSemantic, servedTable, type RestResponse } from './rest.js';
import { checkSemantic } from './semantic.js';

/**
 * The checks of the verify stage, as data (BFCL's checkers: one function per check, each a
 * categorized verdict). Each formulation kind lists its checks in the order they run; a
 * check that `needs` an earlier one is `<check>:not_run` when that one failed; a check that
 * `applies` to some subjects only leaves no verdict on the others. A sample is accepted when
 * every verdict is ok; otherwise the first failing verdict is its rejection.
 * Adding a check: its function, and its line in the lists below.
 */

export interface Check<S> {
  name: string;
  /** The earlier check whose success this one presupposes. */
  needs?: string;
  /** Whether the subject has what this check checks (absent: every subject has). */
  applies?(subject: S): boolean;
  run(subject: S): Verdict | Promise<Verdict>;
}

/** What a SLOT/SEL sequence is checked on. */
export interface SequenceSubject {
  sequence: SlotSequence | SelSequence;
  /** The specs of the tools it may call. */
  tools: ToolSpec[];
  execution: ExecutionResult;
  gold: GoldResult;
  /** The sequence run on each database variant the gold was run on. */
  onVariants(): Promise<VariantRun[]>;
  /** The sequence's data keys (`dataDependencies`) counted on the database and on each variant it is verified on. */
  keyRuns(): Promise<KeyRun[]>;
}

/** What a REST call is checked on; `response` calls the endpoint (once, and only if a check needs it). */
export interface RestSubject {
  endpoint: SynthesizedEndpoint;
  db: DatabaseInfo;
  maxStringLength: number;
  response(): Promise<RestResponse>;
  instance: Instance;
  gold: GoldResult;
  judge: AnswerJudge | null;
  /** The endpoint called on each database variant the gold was run on. */
  onVariants(): Promise<VariantRun[]>;
}

/** Shared by both formulations' checks: the same verdict over the subject's runs on the database variants. */
const differentialCheck = {
  name: 'differential',
  needs: 'semantic',
  run: async (s: { gold: GoldResult; onVariants(): Promise<VariantRun[]> }) =>
    checkDifferential(s.gold, await s.onVariants()),
} as const;

export const SEQUENCE_CHECKS = [
  { name: 'format', run: (s) => checkFormat(s.sequence, s.tools) },
  { name: 'execution', run: (s) => checkExecution(s.execution) },
  {
    name: 'semantic',
    needs: 'execution',
    run: (s) => checkSemantic(s.execution.ok ? s.execution.outputs : [], s.gold),
  },
  {
    name: 'dependencies',
    needs: 'semantic',
    applies: (s) => (s.sequence.dataDependencies?.length ?? 0) > 0,
    run: async (s) => checkDependencies(await s.keyRuns()),
  },
  differentialCheck,
] as const satisfies readonly Check<SequenceSubject>[];

export const REST_CHECKS = [
  { name: 'format', run: (s) => checkRestFormat(s.endpoint, s.db, s.maxStringLength) },
  { name: 'execution', needs: 'format', run: async (s) => checkRestExecution(await s.response(), s.endpoint.spec) },
  { name: 'semantic', needs: 'execution', run: restSemantic },
  differentialCheck,
] as const satisfies readonly Check<RestSubject>[];

type AnyCheck = (typeof SEQUENCE_CHECKS | typeof REST_CHECKS)[number];
type SometimesCheck = Extract<AnyCheck, { applies: unknown }>;

/** The verdict of every check that applied, by check name, in the order they ran. */
export type Verification = Record<Exclude<AnyCheck, SometimesCheck>['name'], Verdict> & {
  [C in SometimesCheck as C['name']]?: Awaited<ReturnType<C['run']>>;
};

/** Runs `checks` in order; `failed` is the first failing verdict. */
export async function runChecks<S>(
  checks: readonly Check<S>[],
  subject: S,
): Promise<{ verification: Verification; failed?: Verdict }> {
  const verdicts: Record<string, Verdict> = {};
  for (const check of checks) {
    if (check.applies && !check.applies(subject)) continue;
    verdicts[check.name] =
      check.needs && !verdicts[check.needs]?.ok
        ? { ok: false, category: `${check.name}:not_run`, message: `the ${check.needs} check failed` }
        : await check.run(subject);
  }
  return { verification: verdicts as Verification, failed: Object.values(verdicts).find((v) => !v.ok) };
}

/** The comparison rules, then the judge for what they cannot decide (when there is one). */
async function restSemantic(s: RestSubject): Promise<Verdict> {
  const response = await s.response();
  const verdict = checkRestSemantic(servedTable(response.body, s.endpoint.spec), s.gold);
  if (verdict.category !== 'semantic:undecidable' || !s.judge) return verdict;
  const judged = await s.judge.judge({
    question: s.instance.question,
    evidence: s.instance.evidence,
    gold: s.gold,
    response: response.body,
  });
  return { ok: judged.ok, category: judged.category, message: judged.message };
}
