import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { MemoryLlmCache } from '../../generators/llm/cache.js';
import { LlmClient } from '../../generators/llm/client.js';
import { bindPlaceholders } from '../../runtime/rest/bind.js';
import { dedupEndpoints, type DedupResult } from '../../generators/rest/dedup.js';
import {
  applyVerifiedMerges,
  dedupAgentFingerprint,
  proposeMerges,
  type MergeProposal,
  type RunEndpoint,
} from '../../generators/rest/dedup-agent.js';
import type { ParameterSpec, SynthesizedEndpoint } from '../../runtime/rest/spec.js';
import type { DatabaseInfo } from '../../core/model.js';
import { createDirectExecutor } from '../../runtime/sql/direct.js';
import type { SqlExecutor } from '../../runtime/sql/executor.js';
import { FakeClock, llmConfig, ScriptedChatModel, type Step } from '../llm/helpers.js';
import { removeTempDirs } from '../sql/fixtures.js';
import { schoolsDb } from './fixtures.js';

let db: DatabaseInfo;
let executor: SqlExecutor;
beforeAll(() => {
  db = schoolsDb();
  executor = createDirectExecutor();
});
afterAll(async () => {
  await executor.close();
  removeTempDirs();
});

/** The endpoint over the schools database; a failure to bind or run is null, as the contract says. */
const run: RunEndpoint = async (spec, args) => {
  try {
    const bound = bindPlaceholders(spec.sql, args, spec.parameters);
    return await executor.run({ dbPath: db.path, sql: bound.sql, params: bound.params, timeoutMs: 5000 });
  } catch {
    return null;
  }
};

const param = (name: string): ParameterSpec => ({
  name,
  type: 'integer',
  description: `${name} of enrolled students`,
  required: true,
});

function endpoint(operationId: string, sql: string, args: Record<string, number>): SynthesizedEndpoint {
  const path = `/v1/test/schools/${operationId.toLowerCase()}`;
  return {
    spec: {
      operationId,
      path,
      summary: `${operationId} summary`,
      description: 'd',
      parameters: Object.keys(args).map(param),
      sql,
      response: { description: 'r' },
    },
    call: { name: operationId, path, arguments: args },
  };
}

/** Deterministic dedup first, as rest.dedup runs it: instance ids q0, q1, ... in order. */
const dedup = (...endpoints: SynthesizedEndpoint[]): DedupResult =>
  dedupEndpoints(
    endpoints.map((e, i) => ({ instanceId: `q${i}`, endpoint: e })),
    db,
  );

function clientWith(steps: Step[]) {
  const model = new ScriptedChatModel(steps);
  return {
    model,
    client: new LlmClient({
      model,
      config: llmConfig({ maxRetries: 0 }),
      cache: new MemoryLlmCache(),
      clock: new FakeClock(),
    }),
  };
}

const merge = (
  keep: string,
  merged: string,
  map: Record<string, string>,
  reason = 'same filter',
): Record<string, unknown> => ({ keep, merge: merged, parameter_map: map, reason });
const reply = (...merges: Record<string, unknown>[]): string => JSON.stringify({ merges });

const ABOVE = endpoint('getSchoolsAbove', 'SELECT name FROM school WHERE enrollment > :min_enrollment', {
  min_enrollment: 400,
});
const NOT_AT_MOST = endpoint('listSchoolsOver', 'SELECT name FROM school WHERE NOT enrollment <= :p', { p: 100 });
/** Close, but `>=`: differs from ABOVE where the bound is an enrollment (300 is Pine Elementary's). */
const AT_LEAST = endpoint('getLargeSchools', 'SELECT name FROM school WHERE enrollment >= :n', { n: 300 });
/** Same as ABOVE up to a parameter name: merged by the deterministic pass. */
const ABOVE_RENAMED = endpoint('getSchoolsAboveToo', 'SELECT name FROM school WHERE enrollment > :students', {
  students: 1000,
});
const COUNTIES = endpoint('getCountiesAbove', 'SELECT county_name FROM county WHERE population > :min_population', {
  min_population: 1,
});
const ALL = endpoint('getSchoolNames', 'SELECT name FROM school', {});

describe('proposeMerges', () => {
  test('shows a candidate group (same tables, same parameter count) and returns the valid proposals', async () => {
    const { client, model } = clientWith([reply(merge('getSchoolsAbove', 'listSchoolsOver', { p: 'min_enrollment' }))]);
    const { canonical } = dedup(ABOVE, NOT_AT_MOST, COUNTIES, ALL);
    const proposed = await proposeMerges(client, canonical, 'schools');
    expect(proposed).toEqual({
      proposals: [
        {
          keep: 'getSchoolsAbove',
          merge: 'listSchoolsOver',
          parameterMap: { p: 'min_enrollment' },
          reason: 'same filter',
        },
      ],
      dropped: [],
    });
    expect(model.calls).toBe(1);
    const prompt = model.received[0][1].text;
    expect(prompt).toContain('Database: schools');
    expect(prompt).toContain('NOT enrollment <= :p');
    expect(prompt).toContain('"summary": "getSchoolsAbove summary"');
    // Endpoints of other groups are never shown with them.
    expect(prompt).not.toContain('getCountiesAbove');
    expect(prompt).not.toContain('getSchoolNames');
  });

  test('drops unknown operationIds, self-merges and parameter maps that are no bijection, saying why', async () => {
    const { client } = clientWith([
      reply(
        merge('getSchoolsAbove', 'getNothing', {}),
        merge('getSchoolsAbove', 'getSchoolsAbove', { min_enrollment: 'min_enrollment' }),
        merge('getSchoolsAbove', 'listSchoolsOver', { q: 'min_enrollment' }),
        merge('getSchoolsAbove', 'listSchoolsOver', {}),
        merge('getSchoolsAbove', 'getCountiesAbove', { min_population: 'min_enrollment' }),
        merge('getSchoolsAbove', 'listSchoolsOver', { p: 'min_enrollment' }),
      ),
    ]);
    const proposed = await proposeMerges(client, dedup(ABOVE, NOT_AT_MOST, COUNTIES).canonical, 'schools');
    expect(proposed.proposals.map((p) => p.merge)).toEqual(['listSchoolsOver']);
    expect(proposed.dropped.map((d) => d.why)).toEqual([
      'unknown operationId "getNothing"',
      'getSchoolsAbove merged into itself',
      'parameter_map {"q":"min_enrollment"} is not a one-to-one map of listSchoolsOver(p) onto getSchoolsAbove(min_enrollment)',
      'parameter_map {} is not a one-to-one map of listSchoolsOver(p) onto getSchoolsAbove(min_enrollment)',
      // Not in the group shown: unknown to this call.
      'unknown operationId "getCountiesAbove"',
    ]);
  });

  test('an unreadable reply → no proposals, the failure recorded', async () => {
    const { client } = clientWith(['Sure, these look the same!']);
    const proposed = await proposeMerges(client, dedup(ABOVE, NOT_AT_MOST).canonical, 'schools');
    expect(proposed).toEqual({
      proposals: [],
      dropped: [],
      failure: expect.stringMatching(/^school \/ 1 parameter\(s\): llm:invalid_json: /),
    });
  });

  test('no group of two or more → no model call', async () => {
    const { client, model } = clientWith([reply()]);
    expect(await proposeMerges(client, dedup(ABOVE, COUNTIES, ALL).canonical, 'schools')).toEqual({
      proposals: [],
      dropped: [],
    });
    expect(model.calls).toBe(0);
  });

  test('a group larger than one call takes is split evenly', async () => {
    const many = Array.from({ length: 61 }, (_, i) =>
      endpoint(`getSchools${i}`, `SELECT name FROM school WHERE enrollment > :m + ${i}`, { m: 1 }),
    );
    const { client, model } = clientWith([reply()]);
    await proposeMerges(client, dedup(...many).canonical, 'schools');
    expect(model.calls).toBe(2);
    expect(model.received.map((messages) => messages[1].text.match(/"operationId"/g)?.length)).toEqual([31, 30]);
  });
});

describe('applyVerifiedMerges', () => {
  const proposal = (keep: string, merged: string, parameterMap: Record<string, string>): MergeProposal => ({
    keep,
    merge: merged,
    parameterMap,
    reason: 'same filter',
  });

  test('a true near-duplicate is accepted: endpoint gone, calls rewritten, merge recorded', async () => {
    const before = dedup(ABOVE, NOT_AT_MOST, ABOVE_RENAMED, COUNTIES);
    const result = await applyVerifiedMerges(
      before,
      [proposal('getSchoolsAbove', 'listSchoolsOver', { p: 'min_enrollment' })],
      run,
    );
    expect(result.rejectedProposals).toEqual([]);
    expect(result.canonical.map((s) => s.operationId)).toEqual(['getSchoolsAbove', 'getCountiesAbove']);
    expect(result.calls.get('q1')).toEqual({
      name: 'getSchoolsAbove',
      path: '/v1/test/schools/getschoolsabove',
      arguments: { min_enrollment: 100 },
    });
    expect(result.calls.get('q2')).toEqual(before.calls.get('q2'));
    // q0 and q2 call the kept endpoint, q1 the merged one.
    expect(result.merges.slice(before.merges.length)).toEqual([
      {
        kept: 'q0',
        merged: 'q1',
        reason: 'llm: same filter (listSchoolsOver → getSchoolsAbove); verified identical on 3 instances',
      },
    ]);
    // The input is left as it was.
    expect(before.canonical).toHaveLength(3);
    expect(before.calls.get('q1')?.name).toBe('listSchoolsOver');
  });

  test('a wrong proposal is rejected with the instance where the results differ', async () => {
    const before = dedup(ABOVE, AT_LEAST);
    const result = await applyVerifiedMerges(
      before,
      [proposal('getSchoolsAbove', 'getLargeSchools', { n: 'min_enrollment' })],
      run,
    );
    expect(result.canonical).toEqual(before.canonical);
    expect(result.calls).toEqual(before.calls);
    expect(result.merges).toEqual(before.merges);
    expect(result.rejectedProposals).toEqual([
      {
        proposal: expect.objectContaining({ merge: 'getLargeSchools' }),
        reason: 'results differ on instance q1: 3 vs 4 rows',
      },
    ]);
  });

  test('an endpoint that fails to run rejects the proposal', async () => {
    const failing: RunEndpoint = async (spec, args) =>
      spec.operationId === 'listSchoolsOver' ? null : run(spec, args);
    const result = await applyVerifiedMerges(
      dedup(ABOVE, NOT_AT_MOST),
      [proposal('getSchoolsAbove', 'listSchoolsOver', { p: 'min_enrollment' })],
      failing,
    );
    expect(result.rejectedProposals.map((r) => r.reason)).toEqual(['listSchoolsOver failed on instance q0']);
  });

  test("a chain moves the first endpoint's instances on, re-verified; proposals on merged-away endpoints are rejected", async () => {
    const SHIFTED = endpoint('getSchoolsShifted', 'SELECT name FROM school WHERE enrollment - :c > 0', { c: 650 });
    const before = dedup(ABOVE, NOT_AT_MOST, SHIFTED);
    const result = await applyVerifiedMerges(
      before,
      [
        proposal('listSchoolsOver', 'getSchoolsAbove', { min_enrollment: 'p' }),
        proposal('getSchoolsShifted', 'listSchoolsOver', { p: 'c' }),
        proposal('getSchoolsAbove', 'getSchoolsShifted', { c: 'min_enrollment' }),
      ],
      run,
    );
    expect(result.canonical.map((s) => s.operationId)).toEqual(['getSchoolsShifted']);
    expect([...result.calls.values()].map((c) => [c.name, c.arguments])).toEqual([
      ['getSchoolsShifted', { c: 400 }],
      ['getSchoolsShifted', { c: 100 }],
      ['getSchoolsShifted', { c: 650 }],
    ]);
    expect(result.merges.map((m) => [m.kept, m.merged, m.reason.match(/on (\d+) instances/)?.[1]])).toEqual([
      ['q1', 'q0', '2'],
      ['q2', 'q0', '3'],
      ['q2', 'q1', '3'],
    ]);
    expect(result.rejectedProposals.map((r) => r.reason)).toEqual([
      'getSchoolsAbove was already merged into listSchoolsOver',
    ]);
  });

  test('end to end: proposals from the model, verified against the database', async () => {
    const before = dedup(ABOVE, NOT_AT_MOST, AT_LEAST);
    const { client } = clientWith([
      reply(
        merge('getSchoolsAbove', 'listSchoolsOver', { p: 'min_enrollment' }),
        merge('getSchoolsAbove', 'getLargeSchools', { n: 'min_enrollment' }),
      ),
    ]);
    const { proposals } = await proposeMerges(client, before.canonical, 'schools');
    const result = await applyVerifiedMerges(before, proposals, run);
    expect(result.canonical.map((s) => s.operationId)).toEqual(['getSchoolsAbove', 'getLargeSchools']);
    expect(result.rejectedProposals.map((r) => r.proposal.merge)).toEqual(['getLargeSchools']);
  });
});

test("the agent's fingerprint holds its prompt texts", () => {
  expect(dedupAgentFingerprint()).toEqual({
    system: expect.stringContaining('duplicates'),
    user: expect.stringContaining('{{endpoints}}'),
  });
});
