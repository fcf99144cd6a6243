import { accept, reject, type Outcome } from '../../core/outcome.js';
import type { DatabaseInfo, GoldResult, Instance, Verdict } from '../../core/model.js';
import { synthesizeWithRetries, type SynthesisItem } from '../../pipeline/stages/rest-synthesize.js';
import type { SynthesizedEndpoint } from '../../runtime/rest/spec.js';
import type { SynthesisRequest, Synthesizer } from '../../generators/rest/synthesis.js';

/** The verify-and-retry loop with scripted synthesizers and checks: attempts, feedback, fallback, faults. */

const db = { dbId: 'shop' } as DatabaseInfo;
const gold = { columns: ['n'], rows: [[1]] } as GoldResult;
const item = (id: string): SynthesisItem => ({ instance: { id, question: `q${id}` } as Instance, gold });
const endpoint = (tag: string): SynthesizedEndpoint => ({
  spec: {
    operationId: tag,
    path: `/v1/d/shop/${tag}`,
    summary: tag,
    description: '',
    parameters: [],
    sql: 'SELECT 1',
    response: { description: 'x' },
  },
  call: { name: tag, path: `/v1/d/shop/${tag}`, arguments: {} },
});

/** Proposes `<name>-<attempt>` for each request; records what it was asked. */
function scripted(
  name: string,
  reply?: (request: SynthesisRequest) => Outcome<SynthesizedEndpoint>,
): Synthesizer & { seen: SynthesisRequest[][] } {
  const seen: SynthesisRequest[][] = [];
  return {
    name,
    fingerprint: name,
    seen,
    synthesize: async (requests) => {
      seen.push(requests.map((r) => ({ ...r, previous: [...r.previous] })));
      return requests.map((r) => reply?.(r) ?? accept(endpoint(`${name}-${r.previous.length + 1}`)));
    },
  };
}

/** Passes the endpoints whose operationId is in `good`. */
const checkPassing =
  (...good: string[]) =>
  async (candidate: SynthesizedEndpoint): Promise<Verdict | null> =>
    good.includes(candidate.spec.operationId)
      ? null
      : { ok: false, category: 'semantic:value_mismatch', message: `${candidate.spec.operationId} is wrong` };

const loop = (
  synthesizer: Synthesizer,
  check: (e: SynthesizedEndpoint) => Promise<Verdict | null>,
  fallback: Synthesizer | null = null,
  attempts = 2,
) =>
  synthesizeWithRetries([item('a')], {
    db,
    datasetName: 'd',
    synthesizer,
    fallback,
    attempts,
    check: async (endpoint) => ({ endpoint, failure: await check(endpoint) }),
  });

test('a failed check goes back with the failure as feedback; the second attempt is accepted with its history', async () => {
  const llm = scripted('llm');
  const [record] = await loop(llm, checkPassing('llm-2'));
  expect(record).toMatchObject({ ok: true, synthesizer: 'llm', endpoint: { spec: { operationId: 'llm-2' } } });
  expect(record.attempts).toEqual([
    expect.objectContaining({
      category: 'semantic:value_mismatch',
      endpoint: expect.objectContaining({ spec: expect.objectContaining({ operationId: 'llm-1' }) }),
    }),
  ]);
  expect(llm.seen[1][0].previous).toHaveLength(1);
});

test("after the last attempt the fallback gets one try; without one, the last failure's category rejects", async () => {
  const withFallback = await loop(scripted('llm'), checkPassing('template-3'), scripted('template'));
  expect(withFallback[0]).toMatchObject({ ok: true, synthesizer: 'template' });
  const without = await loop(
    scripted('llm', (r) => (r.previous.length ? reject('llm:invalid_json', 'not JSON') : accept(endpoint('x')))),
    checkPassing(),
  );
  expect(without[0]).toMatchObject({
    ok: false,
    category: 'llm:invalid_json',
    message: expect.stringMatching(/after 2 attempt/),
  });
});

test('a synthesizer that ignores feedback gets one attempt', async () => {
  const template = { ...scripted('template'), ignoresFeedback: true };
  const [record] = await loop(template, checkPassing());
  expect(template.seen).toHaveLength(1);
  expect(record).toMatchObject({ ok: false, category: 'semantic:value_mismatch' });
});

test('a synthesizer or check that throws ends the item as an internal error: no feedback, no further attempt', async () => {
  const broken: Synthesizer = {
    name: 'broken',
    fingerprint: 'b',
    synthesize: async () => {
      throw new Error('boom');
    },
  };
  expect((await loop(broken, checkPassing()))[0]).toMatchObject({
    ok: false,
    category: 'internal_error',
    message: expect.stringMatching(/boom/),
  });
  // A lost SQL worker in the check of the first attempt: had it been fed back, the second
  // attempt's record (cached) would carry it.
  const llm = scripted('llm');
  const template = scripted('template');
  const crashingOnce = async (): Promise<Verdict | null> => {
    if (llm.seen.length === 1) throw new Error('worker died');
    return null;
  };
  expect((await loop(llm, crashingOnce, template))[0]).toMatchObject({
    ok: false,
    category: 'internal_error',
    message: expect.stringMatching(/worker died/),
  });
  expect(llm.seen).toHaveLength(1);
  expect(template.seen).toHaveLength(0);
});
