import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { BaseMessage } from '@langchain/core/messages';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MemoryLlmCache } from '../../generators/llm/cache.js';
import { createChatModel } from '../../generators/llm/chat-model.js';
import { LlmClient } from '../../generators/llm/client.js';
import type { LlmConfigInput } from '../../generators/llm/config.js';
import { createLlmSynthesizer } from '../../generators/rest/agent.js';
import { checkEndpointSpec } from '../../generators/rest/format-check.js';
import { fillSlots, loadPrompt } from '../../generators/rest/prompts.js';
import type { SynthesizedEndpoint } from '../../runtime/rest/spec.js';
import type { FailedAttempt, SynthesisRequest } from '../../generators/rest/synthesis.js';
import type { DatabaseInfo, Instance } from '../../core/model.js';
import type { Outcome } from '../../core/outcome.js';
import { loadSource } from '../../pipeline/sources/index.js';
import { FakeClock, llmConfig, scriptedClient, type Step } from '../llm/helpers.js';
import { completion, errorReply, scriptedServerPerTest, type ScriptedResponse } from '../llm/scripted-server.js';
import { removeTempDirs, tempDir } from '../sql/fixtures.js';
import { callRows, rows, schoolsDb } from './fixtures.js';

/**
 * The LLM synthesis agent: (a) through a real LlmClient on a scripted LangChain model, for
 * the prompt, batching, parsing and feedback; (b) through the real @langchain/mistralai
 * client against a local server speaking Mistral's protocol, for hostile replies and call
 * failures. Backoff waits go to a FakeClock, so nothing here sleeps for long.
 */

afterAll(removeTempDirs);

type WireEndpoint = Record<string, unknown>;

const reply = (...endpoints: WireEndpoint[]) => JSON.stringify({ endpoints });

function ok(outcome: Outcome<SynthesizedEndpoint>): SynthesizedEndpoint {
  if (!outcome.ok) throw new Error(`${outcome.category}: ${outcome.message}`);
  return outcome.value;
}

const fresh = (...instances: Instance[]): SynthesisRequest[] =>
  instances.map((instance) => ({ instance, previous: [] }));

describe('loadPrompt / fillSlots', () => {
  test('the synthesis prompt loads from seeds/prompts with its slots', () => {
    const prompt = loadPrompt('rest-synthesize');
    expect(prompt.system).toContain('{{output_format}}');
    expect(prompt.user).toContain('{{schema}}');
    expect(prompt.user).toContain('{{instances}}');
  });

  test('one pass: a value containing {{slot}} is not expanded; a slot without a value throws', () => {
    expect(fillSlots('Q: {{question}} in {{ db }}', { question: 'what is {{db}}?', db: 'schools' })).toBe(
      'Q: what is {{db}}? in schools',
    );
    expect(() => fillSlots('{{question}} {{db}}', { question: 'x' })).toThrow('{{db}}');
  });

  test('a name maps to <name>.system.md + <name>.user.md; a value for no slot throws; names cannot escape the folder', () => {
    const dir = tempDir('nl2api-prompts-');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'rest-judge.system.md'), 'Judge {{formulation}} answers.\n');
    writeFileSync(path.join(dir, 'rest-judge.user.md'), 'Gold: {{gold}}\n');
    const prompt = loadPrompt('rest-judge', dir);
    expect(prompt.render({ formulation: 'REST', gold: '[[1]]' })).toEqual([
      { role: 'system', content: 'Judge REST answers.' },
      { role: 'user', content: 'Gold: [[1]]' },
    ]);
    expect(() => prompt.render({ formulation: 'REST', gold: '1', extra: 'x' })).toThrow('no slot for extra');
    expect(() => loadPrompt('../rest-synthesize', dir)).toThrow('invalid prompt name');
  });
});

// ---- (a) a scripted LangChain model through a real LlmClient ----------------------------------

describe('createLlmSynthesizer with a scripted model', () => {
  let db: DatabaseInfo;
  beforeAll(() => {
    db = schoolsDb();
  });

  const BY_COUNTY_SQL =
    "SELECT T2.name FROM county AS T1 JOIN school AS T2 ON T1.id = T2.county_id WHERE T1.county_name = 'Alameda'";
  const byCounty = (id: string): Instance => ({
    id,
    index: 0,
    dbId: 'schools',
    question: 'Which schools are in Alameda county?',
    evidence: "Alameda county refers to county_name = 'Alameda'",
    sql: BY_COUNTY_SQL,
    difficulty: null,
  });
  const byEnrollment: Instance = {
    id: 'b2',
    index: 1,
    dbId: 'schools',
    question: 'Which schools have more than 500 students?',
    evidence: '',
    sql: 'SELECT name FROM school WHERE enrollment > 500',
    difficulty: null,
  };

  const countyEndpoint = (id: string): WireEndpoint => ({
    instance_id: id,
    operation_id: '  getSchoolNamesByCountyName ',
    path: '/admin/drop-everything', // ignored: the path is ours
    summary: 'Get school names by county name',
    description: 'Returns the names of the schools of a county.',
    parameters: [
      { name: 'county_name', type: 'String', description: 'Name of the county', required: true, example: 'Alameda' },
    ],
    sql: '\n  SELECT T2.name FROM county AS T1 JOIN school AS T2 ON T1.id = T2.county_id WHERE T1.county_name = :county_name\n',
    response_description: 'Rows with the column name (school name)',
    arguments: { county_name: 'Alameda' },
  });
  const enrollmentEndpoint: WireEndpoint = {
    instance_id: 'b2',
    operation_id: 'getSchoolNamesByMinEnrollment',
    summary: 'Get school names by minimum enrollment',
    parameters: [
      {
        name: 'min_enrollment',
        type: 'integer',
        description: 'Lower bound (exclusive) of enrolled students',
        required: true,
        example: null,
      },
    ],
    sql: 'SELECT name FROM school WHERE enrollment > :min_enrollment',
    response_description: 'Rows with the column name',
    arguments: { min_enrollment: 500 },
  };

  function setup(steps: Step[], batchSize?: number) {
    const { model, client } = scriptedClient(steps, { maxRetries: 0 });
    return {
      model,
      client,
      synthesizer: createLlmSynthesizer(client, { providerLabel: 'test/test-model', batchSize }),
    };
  }

  const contents = (messages: BaseMessage[]) => messages.map((m) => ({ role: m.getType(), content: m.text }));
  const instanceIds = (messages: BaseMessage[]) =>
    [...messages[1].text.matchAll(/^instance_id: "([^"]+)"$/gm)].map((m) => m[1]);

  test('a good batch reply → endpoints served at our path, calls that reproduce the gold rows', async () => {
    const { model, synthesizer } = setup([reply(countyEndpoint('a1'), enrollmentEndpoint)]);
    const [county, enrollment] = (
      await synthesizer.synthesize(fresh(byCounty('a1'), byEnrollment), db, 'Test Set')
    ).map(ok);
    expect(model.calls).toBe(1);
    expect(county.spec).toMatchObject({
      operationId: 'getSchoolNamesByCountyName',
      path: '/v1/test-set/schools/get-school-names-by-county-name',
      sql: 'SELECT T2.name FROM county AS T1 JOIN school AS T2 ON T1.id = T2.county_id WHERE T1.county_name = :county_name',
      parameters: [{ name: 'county_name', type: 'string', required: true, example: 'Alameda' }],
      response: { description: 'Rows with the column name (school name)' },
    });
    expect(county.call).toEqual({
      name: 'getSchoolNamesByCountyName',
      path: county.spec.path,
      arguments: { county_name: 'Alameda' },
    });
    expect(enrollment.spec.description).toBe('');
    expect(enrollment.spec.parameters[0]).not.toHaveProperty('example');
    for (const [endpoint, gold] of [
      [county, BY_COUNTY_SQL],
      [enrollment, byEnrollment.sql],
    ] as const) {
      expect(checkEndpointSpec(endpoint.spec, db)).toMatchObject({ ok: true });
      expect(callRows(db, endpoint)).toEqual(rows(db, gold));
    }
  });

  test('the prompt carries the schema with its column descriptions, and each question, evidence and SQL', async () => {
    const { model, synthesizer } = setup([reply(countyEndpoint('a1'), enrollmentEndpoint)]);
    await synthesizer.synthesize(fresh(byCounty('a1'), byEnrollment), db, 'Test Set');
    const [system, user] = contents(model.received[0]);
    expect(system.role).toBe('system');
    expect(system.content).toContain('exactly one read-only query in the SQLite dialect');
    expect(system.content).toContain('"operation_id": "getProductNamesByCategoryAndMaxPrice"');
    expect(user.content).toContain('Dataset: Test Set\nDatabase: schools');
    expect(user.content).toContain('county_name TEXT — name of the county');
    expect(user.content).toContain('enrollment INTEGER — number of enrolled students');
    expect(user.content).toContain('A2 TEXT — city name');
    expect(user.content).toContain('foreign key: county_id → county.id');
    expect(user.content).toContain('  - id INTEGER\n'); // no description beyond its name
    for (const instance of [byCounty('a1'), byEnrollment]) {
      expect(user.content).toContain(`question: ${instance.question}`);
      expect(user.content).toContain(`sql: ${instance.sql}`);
    }
    expect(user.content).toContain(`evidence: ${byCounty('a1').evidence}`);
    expect(user.content).toContain('evidence: (none)');
  });

  test('name and fingerprint: the provider, the batch size and the prompt texts', () => {
    const { synthesizer } = setup([reply()], 3);
    const prompt = loadPrompt('rest-synthesize');
    expect(synthesizer.name).toBe('llm:test/test-model');
    expect(synthesizer.fingerprint).toMatchObject({
      system: prompt.system,
      user: prompt.user,
      providerLabel: 'test/test-model',
      batchSize: 3,
    });
  });

  test('a reply in ```json fences is repaired', async () => {
    const { synthesizer } = setup([`Here you are:\n\`\`\`json\n${reply(countyEndpoint('a1'))}\n\`\`\``]);
    const [outcome] = await synthesizer.synthesize(fresh(byCounty('a1')), db, 'Test Set');
    expect(ok(outcome).spec.operationId).toBe('getSchoolNamesByCountyName');
  });

  test('a reply that is not JSON even after repair → llm:invalid_json for every instance of the batch', async () => {
    const { synthesizer } = setup(['{"endpoints": [{"instance_id": a1, "sql": SELECT}]}']);
    const outcomes = await synthesizer.synthesize(fresh(byCounty('a1'), byEnrollment), db, 'Test Set');
    expect(outcomes).toEqual([
      expect.objectContaining({ ok: false, category: 'llm:invalid_json' }),
      expect.objectContaining({ ok: false, category: 'llm:invalid_json' }),
    ]);
  });

  test('an instance missing from the reply, or with a malformed endpoint, → llm:schema for it alone', async () => {
    const missing = setup([reply(countyEndpoint('a1'))]);
    const [found, lost] = await missing.synthesizer.synthesize(fresh(byCounty('a1'), byEnrollment), db, 'Test Set');
    expect(found.ok).toBe(true);
    expect(lost).toEqual({ ok: false, category: 'llm:schema', message: 'no endpoint for instance b2 in the reply' });

    const malformed = setup([
      reply(
        countyEndpoint('a1'),
        { ...enrollmentEndpoint, operation_id: 'get schools!' },
        { instance_id: 'a9', sql: 1 },
      ),
    ]);
    const [good, bad] = await malformed.synthesizer.synthesize(fresh(byCounty('a1'), byEnrollment), db, 'Test Set');
    expect(good.ok).toBe(true);
    expect(bad).toMatchObject({ ok: false, category: 'llm:schema', message: expect.stringContaining('operationId') });
  });

  test('feedback of earlier attempts is replayed as conversation; call failures add nothing', async () => {
    const { model, synthesizer } = setup([reply(countyEndpoint('a1'))]);
    const proposed = ok(
      (await setup([reply(countyEndpoint('a1'))]).synthesizer.synthesize(fresh(byCounty('a1')), db, 'Test Set'))[0],
    );
    const previous: FailedAttempt[] = [
      { category: 'llm:invalid_json', message: 'the reply is not valid JSON, even after repair' },
      { category: 'llm:timeout', message: 'no reply within 10 ms' },
      {
        category: 'semantic:different_rows',
        message: 'the call returns 2 rows, the gold SQL 3',
        endpoint: { spec: proposed.spec, arguments: proposed.call.arguments },
      },
    ];
    await synthesizer.synthesize([{ instance: byCounty('a1'), previous }], db, 'Test Set');
    const messages = contents(model.received[0]);
    expect(messages.map((m) => m.role)).toEqual(['system', 'human', 'ai', 'human']);
    expect(messages[1].content).toContain('question: Which schools are in Alameda county?');
    expect(messages[1].content).toContain('Your previous reply was rejected because it was not valid JSON');
    expect(JSON.stringify(messages)).not.toContain('llm:timeout');
    expect(JSON.parse(messages[2].content)).toEqual({
      endpoints: [
        expect.objectContaining({
          instance_id: 'a1',
          operation_id: 'getSchoolNamesByCountyName',
          sql: proposed.spec.sql,
          arguments: { county_name: 'Alameda' },
        }),
      ],
    });
    expect(messages[3].content).toContain(
      'The endpoint you proposed for instance a1 failed semantic:different_rows: the call returns 2 rows, the gold SQL 3',
    );
  });

  test('batching: batchSize first attempts per call; a request with feedback goes alone', async () => {
    const ids = ['a1', 'a2', 'a3', 'a4', 'a5'];
    const everything = reply(...ids.map(countyEndpoint));
    const first = setup([everything], 2);
    const outcomes = await first.synthesizer.synthesize(fresh(...ids.map(byCounty)), db, 'Test Set');
    expect(outcomes.map((o) => o.ok)).toEqual([true, true, true, true, true]);
    expect(first.model.received.map(instanceIds).sort()).toEqual([['a1', 'a2'], ['a3', 'a4'], ['a5']]);

    const mixed = setup([everything], 4);
    const retry: SynthesisRequest = {
      instance: byCounty('a3'),
      previous: [{ category: 'format:unknown_column', message: 'no such column: nme' }],
    };
    const requests = [...fresh(byCounty('a1'), byCounty('a2')), retry, ...fresh(byCounty('a4'))];
    expect((await mixed.synthesizer.synthesize(requests, db, 'Test Set')).map((o) => o.ok)).toEqual([
      true,
      true,
      true,
      true,
    ]);
    expect(mixed.model.received.map(instanceIds).sort()).toEqual([['a1', 'a2', 'a4'], ['a3']]);
  });

  test('the same requests twice: the second is answered from the cache, no model call', async () => {
    const { model, synthesizer } = setup([reply(countyEndpoint('a1'), enrollmentEndpoint)]);
    const requests = fresh(byCounty('a1'), byEnrollment);
    const once = await synthesizer.synthesize(requests, db, 'Test Set');
    expect(await synthesizer.synthesize(requests, db, 'Test Set')).toEqual(once);
    expect(model.calls).toBe(1);
  });
});

// ---- (b) the real Mistral client against a scripted server ------------------------------------

describe('createLlmSynthesizer through @langchain/mistralai', () => {
  const demo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../seeds/demo');
  let db: DatabaseInfo;
  let mystery: Instance;
  let pricing: Instance;
  beforeAll(async () => {
    const source = await loadSource(demo, { dbIds: ['bookstore'] });
    db = source.databases[0];
    mystery = source.instances.find((i) => i.id === '0')!; // Mystery books under 10 dollars
    pricing = source.instances.find((i) => i.id === '5')!;
  });

  const startServer = scriptedServerPerTest();

  async function setup(script: ScriptedResponse[], overrides: LlmConfigInput = {}) {
    const server = await startServer(script);
    const config = llmConfig({
      provider: 'mistral',
      model: 'mistral-large-latest',
      baseUrl: server.url,
      timeoutMs: 30_000 /* a hang guard: a loaded machine may answer slowly */,
      maxRetries: 2,
      backoff: { baseMs: 1, maxMs: 5 },
      ...overrides,
    });
    const client = new LlmClient({
      model: await createChatModel(config, { MISTRAL_API_KEY: 'test-key' }),
      config,
      cache: new MemoryLlmCache(),
      clock: new FakeClock(),
    });
    return {
      server,
      client,
      synthesizer: createLlmSynthesizer(client, { providerLabel: 'mistral/mistral-large-latest' }),
    };
  }

  const mysteryEndpoint = (sql: string, parameters: WireEndpoint[] = [], args: WireEndpoint = {}): WireEndpoint => ({
    instance_id: '0',
    operation_id: 'getBookTitlesByGenreAndMaxPrice',
    summary: 'Get book titles by genre and maximum price',
    description: 'Titles of the books of a genre cheaper than a price.',
    parameters,
    sql,
    response_description: 'Rows with the column title',
    arguments: args,
  });
  const GOOD = mysteryEndpoint(
    'SELECT title FROM book WHERE genre = :genre AND `Price (USD)` < :max_price_usd',
    [
      { name: 'genre', type: 'string', description: 'Genre of the book', required: true, example: 'Mystery' },
      {
        name: 'max_price_usd',
        type: 'number',
        description: 'Upper bound (exclusive) of the price in US dollars',
        required: true,
        example: 10,
      },
    ],
    { genre: 'Mystery', max_price_usd: 10 },
  );

  const fileHash = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

  test('a good reply → an endpoint that passes the format check and returns the gold rows', async () => {
    const { server, synthesizer } = await setup([completion(reply(GOOD))]);
    const [outcome] = await synthesizer.synthesize(fresh(mystery), db, 'demo');
    const endpoint = ok(outcome);
    expect(endpoint.spec.path).toBe('/v1/demo/bookstore/get-book-titles-by-genre-and-max-price');
    expect(checkEndpointSpec(endpoint.spec, db)).toMatchObject({ ok: true });
    expect(callRows(db, endpoint)).toEqual(rows(db, mystery.sql));
    expect(server.requests).toHaveLength(1);
    const sent = server.requests[0].body.messages as { role: string; content: string }[];
    expect(sent.map((m) => m.role)).toEqual(['system', 'user']);
    expect(sent[1].content).toContain('`Price (USD)` REAL');
    expect(sent[1].content).toContain(mystery.question);
  });

  test.each([
    ['DROP TABLE', 'DROP TABLE book', [], {}],
    [
      'UPDATE',
      'UPDATE book SET title = :title',
      [{ name: 'title', type: 'string', description: 'New title', required: true }],
      { title: 'x' },
    ],
    ['ATTACH', "ATTACH DATABASE '/tmp/nl2api-attack.sqlite' AS attack", [], {}],
    ['PRAGMA', 'PRAGMA writable_schema = 1', [], {}],
    ['a SELECT with a DROP after it', 'SELECT title FROM book; DROP TABLE book', [], {}],
  ])(
    'a reply proposing %s is returned as data; the format check rejects it and the database is untouched',
    async (_, sql, parameters, args) => {
      const before = fileHash(db.path);
      const { synthesizer } = await setup([completion(reply(mysteryEndpoint(sql, parameters, args)))]);
      const [outcome] = await synthesizer.synthesize(fresh(mystery), db, 'demo');
      const endpoint = ok(outcome);
      expect(endpoint.spec.sql).toBe(sql);
      expect(checkEndpointSpec(endpoint.spec, db)).toMatchObject({ ok: false, category: 'format:not_select' });
      expect(fileHash(db.path)).toBe(before);
    },
  );

  test('a hallucinated column is caught by the format check as format:unknown_column', async () => {
    const hallucinated = { ...GOOD, sql: 'SELECT title FROM book WHERE genre = :genre AND price_usd < :max_price_usd' };
    const { synthesizer } = await setup([completion(reply(hallucinated))]);
    const [outcome] = await synthesizer.synthesize(fresh(mystery), db, 'demo');
    expect(checkEndpointSpec(ok(outcome).spec, db)).toMatchObject({ ok: false, category: 'format:unknown_column' });
  });

  test('429, then success → ok, the retry counted in the client usage', async () => {
    const { server, client, synthesizer } = await setup([errorReply(429), completion(reply(GOOD))]);
    const [outcome] = await synthesizer.synthesize(fresh(mystery), db, 'demo');
    expect(outcome.ok).toBe(true);
    expect(server.requests).toHaveLength(2);
    expect(client.usage.snapshot().total).toMatchObject({ requests: 2, retries: 1, failures: 0 });
  });

  test('500s until the retries are exhausted → llm:server_error for every instance of the batch', async () => {
    const { server, synthesizer } = await setup([errorReply(500)]);
    const outcomes = await synthesizer.synthesize(fresh(mystery, pricing), db, 'demo');
    expect(outcomes.map((o) => !o.ok && o.category)).toEqual(['llm:server_error', 'llm:server_error']);
    expect(server.requests).toHaveLength(3);
  });

  test('a reply slower than timeoutMs → llm:timeout', async () => {
    const { synthesizer } = await setup([{ ...completion(reply(GOOD)), delayMs: 2000 }], {
      timeoutMs: 100,
      maxRetries: 0,
    });
    const [outcome] = await synthesizer.synthesize(fresh(mystery), db, 'demo');
    expect(outcome).toMatchObject({ ok: false, category: 'llm:timeout' });
  });
});
