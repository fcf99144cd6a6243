import { z } from 'zod';
import type { LlmClient } from '../llm/client.js';
import { completeStructured } from '../llm/structured.js';
import { isWord, significant, tokenize, unquote, type Token } from '../../runtime/sql/lexer.js';
import { resultShape } from '../../runtime/sql/result-shape.js';
import type { DedupMerge, DedupResult } from './dedup.js';
import { clip } from './naming.js';
import { loadPrompt, type PromptTemplate } from './prompts.js';
import type { ArgumentValue, EndpointSpec, RestCall } from '../../runtime/rest/spec.js';

/**
 * The LLM de-duplication agent of rest.dedup, after the deterministic pass (dedup.ts): the
 * model proposes merges of near-duplicates the canonical forms cannot see (`price > :p` vs
 * `NOT price <= :min_price`), and a proposal is accepted only when both endpoints return
 * identical rows on the instances of both. The model's reply is data: operationIds and
 * parameter names are checked against the endpoints, and nothing of it is ever executed.
 *
 * A failed model call costs only the merges it might have proposed: it is recorded in
 * `failure` and not retried, since the endpoints stay correct without it.
 */

export interface MergeProposal {
  /** operationId of the endpoint that stays. */
  keep: string;
  /** operationId of the endpoint that goes away. */
  merge: string;
  /** Each parameter of `merge` → the parameter of `keep` that takes its value. */
  parameterMap: Record<string, string>;
  /** The model's reason. */
  reason: string;
}

export interface ProposedMerges {
  proposals: MergeProposal[];
  /** Proposals that do not fit the endpoints shown, with why: never verified nor applied. */
  dropped: { proposal: MergeProposal; why: string }[];
  /** Failed model calls, `<group>: <llm category>: <message>` joined by `; `. */
  failure?: string;
}

/** What an endpoint returned for some arguments; null when running it failed. */
export type RunEndpoint = (
  spec: EndpointSpec,
  args: Record<string, ArgumentValue>,
) => Promise<{ columns: string[]; rows: unknown[][] } | null>;

export interface VerifiedDedupResult extends DedupResult {
  rejectedProposals: { proposal: MergeProposal; reason: string }[];
}

/** At most this many endpoints per model call: a larger candidate group is split evenly. */
const MAX_ENDPOINTS_PER_CALL = 60;

const PROMPT = 'rest-dedup';

/** Prompt texts: part of the cache key of a stage that runs the agent. */
export function dedupAgentFingerprint(): unknown {
  const { system, user } = loadPrompt(PROMPT);
  return { system, user };
}

const DedupReply = z.object({
  merges: z.array(
    z.object({
      keep: z.string().trim(),
      merge: z.string().trim(),
      parameter_map: z.record(z.string(), z.string()).default({}),
      reason: z.string().trim().default(''),
    }),
  ),
});

// ---- proposing --------------------------------------------------------------------------------

/**
 * Asks the model, one candidate group per call, which endpoints of one database are the
 * same query. Endpoints in different groups are never shown together; with no group of two
 * or more, no call is made.
 */
export async function proposeMerges(
  client: LlmClient,
  endpoints: readonly EndpointSpec[],
  dbId: string,
): Promise<ProposedMerges> {
  const groups = candidateGroups(endpoints);
  if (groups.length === 0) return { proposals: [], dropped: [] };
  const prompt = loadPrompt(PROMPT);
  const replies = await Promise.all(groups.map((group) => proposeForGroup(client, prompt, group, dbId)));
  const failures = replies.flatMap((r) => (r.failure === undefined ? [] : [r.failure]));
  return {
    proposals: replies.flatMap((r) => r.proposals),
    dropped: replies.flatMap((r) => r.dropped),
    ...(failures.length ? { failure: failures.join('; ') } : {}),
  };
}

interface CandidateGroup {
  /** For failure messages: the tables and the parameter count the members share. */
  label: string;
  endpoints: EndpointSpec[];
}

/**
 * Endpoints that could be the same query: same tables in FROM/JOIN and same number of
 * parameters (a merge maps parameters one to one). Groups and members in input order;
 * groups of one dropped, groups above MAX_ENDPOINTS_PER_CALL split into even chunks.
 */
function candidateGroups(endpoints: readonly EndpointSpec[]): CandidateGroup[] {
  const byKey = new Map<string, EndpointSpec[]>();
  for (const spec of endpoints) {
    const key = `${referencedTables(spec.sql).join(', ')} / ${spec.parameters.length} parameter(s)`;
    byKey.set(key, [...(byKey.get(key) ?? []), spec]);
  }
  return [...byKey].flatMap(([label, members]) =>
    members.length < 2 ? [] : evenChunks(members, MAX_ENDPOINTS_PER_CALL).map((chunk) => ({ label, endpoints: chunk })),
  );
}

/**
 * Lower-cased names right after FROM or JOIN, at any depth. A lexical scan is enough for a
 * grouping heuristic (and needs no schema); it misses the later tables of a comma join,
 * which can only keep a candidate pair apart, never merge anything.
 */
function referencedTables(sql: string): string[] {
  const tokens = significant(tokenize(sql));
  const names = tokens.flatMap((token, i) => {
    const next: Token | undefined = tokens[i + 1];
    const isName = next?.kind === 'word' || next?.kind === 'quoted' || next?.kind === 'dquote';
    return isWord(token, 'FROM', 'JOIN') && isName ? [unquote(next).toLowerCase()] : [];
  });
  return [...new Set(names)].sort();
}

/** `items` in ⌈n / max⌉ consecutive chunks of near-equal size (no chunk of one left over). */
function evenChunks<T>(items: T[], max: number): T[][] {
  const size = Math.ceil(items.length / Math.ceil(items.length / max));
  const chunks: T[][] = [];
  for (let start = 0; start < items.length; start += size) chunks.push(items.slice(start, start + size));
  return chunks;
}

async function proposeForGroup(
  client: LlmClient,
  prompt: PromptTemplate,
  group: CandidateGroup,
  dbId: string,
): Promise<ProposedMerges> {
  const reply = await completeStructured(
    client,
    prompt.render({ db: dbId, endpoints: endpointsBlock(group.endpoints) }),
    DedupReply,
  );
  if (!reply.ok) return { proposals: [], dropped: [], failure: `${group.label}: ${reply.category}: ${reply.message}` };
  const byId = new Map(group.endpoints.map((spec) => [spec.operationId, spec]));
  const result: ProposedMerges = { proposals: [], dropped: [] };
  for (const wire of reply.value.merges) {
    const proposal: MergeProposal = {
      keep: wire.keep,
      merge: wire.merge,
      parameterMap: wire.parameter_map,
      reason: wire.reason,
    };
    const why = proposalProblem(proposal, byId);
    if (why === undefined) result.proposals.push(proposal);
    else result.dropped.push({ proposal, why });
  }
  return result;
}

/** What the model needs to compare queries; descriptions beyond the summary add nothing. */
function endpointsBlock(endpoints: readonly EndpointSpec[]): string {
  return endpoints
    .map((spec) =>
      JSON.stringify(
        {
          operationId: spec.operationId,
          summary: spec.summary,
          parameters: spec.parameters.map(({ name, type, description }) => ({ name, type, description })),
          sql: spec.sql,
        },
        null,
        2,
      ),
    )
    .join('\n\n');
}

/**
 * Why a proposal cannot be applied to these endpoints, if anything: both must exist and
 * differ, and the parameter map must be a bijection from the merged endpoint's parameters
 * onto the kept one's.
 */
function proposalProblem(proposal: MergeProposal, byId: ReadonlyMap<string, EndpointSpec>): string | undefined {
  const keep = byId.get(proposal.keep);
  const merge = byId.get(proposal.merge);
  if (!keep) return `unknown operationId ${JSON.stringify(proposal.keep)}`;
  if (!merge) return `unknown operationId ${JSON.stringify(proposal.merge)}`;
  if (keep === merge) return `${proposal.keep} merged into itself`;
  const from = Object.keys(proposal.parameterMap).sort();
  const to = Object.values(proposal.parameterMap).sort();
  const mergeParams = merge.parameters.map((p) => p.name).sort();
  const keepParams = keep.parameters.map((p) => p.name).sort();
  if (JSON.stringify(from) !== JSON.stringify(mergeParams) || JSON.stringify(to) !== JSON.stringify(keepParams)) {
    return `parameter_map ${JSON.stringify(proposal.parameterMap)} is not a one-to-one map of ${merge.operationId}(${mergeParams.join(', ')}) onto ${keep.operationId}(${keepParams.join(', ')})`;
  }
  return undefined;
}

// ---- verifying and applying -------------------------------------------------------------------

/**
 * Applies the proposals that survive verification, in the order given: a later proposal
 * sees the result of the earlier ones, so a chain (A into B, then B into C) moves A's
 * instances on to C, re-verified there, and a proposal naming an endpoint already merged
 * away is rejected. Same inputs and same `run` → same result.
 */
export async function applyVerifiedMerges(
  result: DedupResult,
  proposals: readonly MergeProposal[],
  run: RunEndpoint,
): Promise<VerifiedDedupResult> {
  let canonical = [...result.canonical];
  const calls = new Map(result.calls);
  const merges = [...result.merges];
  const rejectedProposals: VerifiedDedupResult['rejectedProposals'] = [];
  const mergedInto = new Map<string, string>();
  for (const proposal of proposals) {
    const gone = [proposal.keep, proposal.merge].find((id) => mergedInto.has(id));
    const byId = new Map(canonical.map((spec) => [spec.operationId, spec]));
    const problem =
      gone !== undefined ? `${gone} was already merged into ${mergedInto.get(gone)}` : proposalProblem(proposal, byId);
    if (problem !== undefined) {
      rejectedProposals.push({ proposal, reason: problem });
      continue;
    }
    const keep = byId.get(proposal.keep)!;
    const merge = byId.get(proposal.merge)!;
    const verified = await verifyMerge(keep, merge, proposal.parameterMap, calls, run);
    if (!verified.ok) {
      rejectedProposals.push({ proposal, reason: verified.reason });
      continue;
    }
    const reason = `llm: ${proposal.reason || '(no reason given)'} (${merge.operationId} → ${keep.operationId}); verified identical on ${verified.instances} instances`;
    merges.push(...rewriteCalls(calls, keep, merge, proposal.parameterMap, reason));
    canonical = canonical.filter((spec) => spec !== merge);
    mergedInto.set(merge.operationId, keep.operationId);
  }
  return { canonical, calls, merges, rejectedProposals };
}

type Verification = { ok: true; instances: number } | { ok: false; reason: string };

/**
 * Runs both endpoints for every instance calling either, each with that instance's
 * arguments (renamed through the map or its inverse), and compares the rows; stops at the
 * first failure or difference.
 */
async function verifyMerge(
  keep: EndpointSpec,
  merge: EndpointSpec,
  parameterMap: Record<string, string>,
  calls: ReadonlyMap<string, RestCall>,
  run: RunEndpoint,
): Promise<Verification> {
  const inverse = Object.fromEntries(Object.entries(parameterMap).map(([from, to]) => [to, from]));
  // Row order is part of the answer if either query fixes it.
  const ordered = resultShape(keep.sql).ordered || resultShape(merge.sql).ordered;
  let instances = 0;
  for (const [instanceId, call] of calls) {
    let args: { keep: Record<string, ArgumentValue>; merge: Record<string, ArgumentValue> };
    if (call.name === keep.operationId)
      args = { keep: call.arguments, merge: renameArguments(call.arguments, inverse) };
    else if (call.name === merge.operationId)
      args = { keep: renameArguments(call.arguments, parameterMap), merge: call.arguments };
    else continue;
    const kept = await run(keep, args.keep);
    if (!kept) return { ok: false, reason: `${keep.operationId} failed on instance ${instanceId}` };
    const merged = await run(merge, args.merge);
    if (!merged) return { ok: false, reason: `${merge.operationId} failed on instance ${instanceId}` };
    const difference = rowsDifference(kept, merged, ordered);
    if (difference !== undefined)
      return { ok: false, reason: `results differ on instance ${instanceId}: ${difference}` };
    instances++;
  }
  return { ok: true, instances };
}

/**
 * Exact comparison, column names aside: same width, same rows — in order when `ordered`,
 * else as multisets. Exact, not within float tolerance: merged endpoints must be the same
 * query, not merely close answers.
 */
function rowsDifference(
  a: { columns: string[]; rows: unknown[][] },
  b: { columns: string[]; rows: unknown[][] },
  ordered: boolean,
): string | undefined {
  if (a.columns.length !== b.columns.length) return `${a.columns.length} vs ${b.columns.length} columns`;
  if (a.rows.length !== b.rows.length) return `${a.rows.length} vs ${b.rows.length} rows`;
  const keysA = a.rows.map((row) => JSON.stringify(row));
  const keysB = b.rows.map((row) => JSON.stringify(row));
  if (!ordered) {
    keysA.sort();
    keysB.sort();
  }
  const i = keysA.findIndex((key, index) => key !== keysB[index]);
  return i < 0 ? undefined : `${ordered ? `row ${i}` : 'rows'}: ${clip(keysA[i], 200)} vs ${clip(keysB[i], 200)}`;
}

/**
 * Points every instance calling `merge` at `keep`, arguments renamed; one DedupMerge per
 * moved instance, `kept` being the first instance that calls `keep`.
 */
function rewriteCalls(
  calls: Map<string, RestCall>,
  keep: EndpointSpec,
  merge: EndpointSpec,
  parameterMap: Record<string, string>,
  reason: string,
): DedupMerge[] {
  // There is one: a canonical endpoint keeps at least the instance it was synthesized for.
  const kept = [...calls].find(([, call]) => call.name === keep.operationId)![0];
  const merges: DedupMerge[] = [];
  for (const [instanceId, call] of calls) {
    if (call.name !== merge.operationId) continue;
    calls.set(instanceId, {
      name: keep.operationId,
      path: keep.path,
      arguments: renameArguments(call.arguments, parameterMap),
    });
    merges.push({ kept, merged: instanceId, reason });
  }
  return merges;
}

/** Own keys only: a parameter may well be called `constructor`. */
function renameArguments(
  args: Record<string, ArgumentValue>,
  names: Record<string, string>,
): Record<string, ArgumentValue> {
  return Object.fromEntries(
    Object.entries(args).map(([name, value]) => [Object.hasOwn(names, name) ? names[name] : name, value]),
  );
}
