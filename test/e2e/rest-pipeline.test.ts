import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Ajv } from 'ajv';
import SwaggerParser from '@apidevtools/swagger-parser';
import { parseConfig } from '../../config/load.js';
import { generate, SourceError } from '../../pipeline/generate.js';
import { packageRoot } from '../../core/package-root.js';
import { serveDataset } from '../../pipeline/serve.js';
import type { ToolSpec } from '../../core/model.js';
import { createDirectExecutor } from '../../runtime/sql/direct.js';
import type { SqlRequest, VariantTableRequest } from '../../runtime/sql/executor.js';

/**
 * The REST formulation through the whole pipeline, offline (template synthesizer): the
 * samples, their tools and OpenAPI, dedup recorded in the stats, the emitted endpoints
 * served by `serve` answering every sample's call as published, and failures counted.
 */

const demo = path.join(packageRoot(), 'seeds', 'demo');
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'nl2api-rest-e2e-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const config = (out: string, overrides: Record<string, unknown> = {}) =>
  parseConfig({ formulations: ['rest'], out, cacheDir: path.join(out, '.cache'), progress: 'none', ...overrides });

const readJsonl = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));

interface RestSampleLine {
  sample_id: string;
  output: { name: string; arguments: Record<string, unknown>; path: string }[];
  output_after_executing_api: unknown;
  synthesizer: string;
  verification: { semantic: { ok: boolean } };
}

describe('REST formulation on the demo (template synthesizer)', () => {
  let out: string;
  beforeAll(async () => {
    out = path.join(dir, 'demo');
    await generate({ config: config(out, { source: demo }) });
  });

  test('every instance ends verified or rejected; dedup counts are in the stats', () => {
    const stats = JSON.parse(readFileSync(path.join(out, 'stats.json'), 'utf8'));
    const total = stats.formulations.rest.total;
    expect(total.input).toBe(50);
    expect(total.accepted + total.rejected).toBe(50);
    expect(total.accepted).toBeGreaterThanOrEqual(48);
    // Each instance's call counted once, whatever the run's databases (the run goes database by database).
    const calls = stats.timing.stages['rest.verify'];
    expect(calls.runs + calls.cacheHits).toBe(total.accepted);
    for (const [db, counts] of Object.entries<{ before: number; after: number; published: number }>(stats.rest.byDb)) {
      expect(counts.before).toBe(stats.formulations.rest.byDb[db].accepted);
      expect(counts.after).toBeLessThanOrEqual(counts.before);
      expect(counts.published).toBe(counts.after);
    }
  });

  test("every published call is valid against its database's published tools and OpenAPI document", async () => {
    const ajv = new Ajv({ strict: false });
    for (const db of ['bookstore', 'cycling_club']) {
      const tools = JSON.parse(readFileSync(path.join(out, 'tools', 'rest', `${db}.json`), 'utf8')) as ToolSpec[];
      const openapi = JSON.parse(readFileSync(path.join(out, 'openapi', 'rest', `${db}.json`), 'utf8'));
      await SwaggerParser.validate(structuredClone(openapi));
      // A generic client reads each endpoint's response schema from the document, $refs resolved.
      const resolved = (await SwaggerParser.dereference(structuredClone(openapi))) as typeof openapi;
      const byName = new Map(tools.map((t) => [t.function.name, t]));
      for (const sample of readJsonl(path.join(out, 'rest', `${db}.jsonl`)) as RestSampleLine[]) {
        const [call] = sample.output;
        const tool = byName.get(call.name);
        expect(tool).toBeDefined();
        expect(ajv.validate(tool!.function.parameters, call.arguments)).toBe(true);
        expect(openapi.paths[call.path].get.operationId).toBe(call.name);
        const responseSchema = resolved.paths[call.path].get.responses['200'].content['application/json'].schema;
        expect(ajv.validate(responseSchema, sample.output_after_executing_api)).toBe(true);
        expect(call.name.length).toBeLessThanOrEqual(64);
        expect(sample.synthesizer).toBe('template');
        expect(sample.verification.semantic.ok).toBe(true);
      }
    }
  });

  test("`serve` answers every sample's call exactly as published; a changed database is refused", async () => {
    const handle = await serveDataset({ config: config(out, { source: demo }), host: '127.0.0.1', port: 0 });
    // An interactive API's time limit, not the pipeline's 30 s.
    expect(handle.server.timeoutMs).toBe(5000);
    try {
      for (const db of ['bookstore', 'cycling_club']) {
        for (const sample of readJsonl(path.join(out, 'rest', `${db}.jsonl`)) as RestSampleLine[]) {
          const [call] = sample.output;
          const url = new URL(call.path, handle.server.url);
          for (const [name, value] of Object.entries(call.arguments)) url.searchParams.set(name, String(value));
          const response = await fetch(url);
          expect(response.status).toBe(200);
          expect(await response.json()).toEqual(sample.output_after_executing_api);
        }
      }
      // Cheap statements cost no worker, however loaded the machine (the budget is CPU time, not wall time).
      expect(handle.sqlStats()).toEqual({ workerRecycles: 0, sparedOverruns: 0 });
    } finally {
      await handle.close();
    }

    const changed = path.join(dir, 'changed-source');
    mkdirSync(path.join(changed, 'dev_databases', 'bookstore'), { recursive: true });
    for (const file of ['dev.json', 'dev_tables.json']) copyFileSync(path.join(demo, file), path.join(changed, file));
    const bookstore = path.join(demo, 'dev_databases', 'bookstore');
    for (const entry of readdirSync(bookstore, { withFileTypes: true })) {
      if (entry.isFile())
        copyFileSync(path.join(bookstore, entry.name), path.join(changed, 'dev_databases', 'bookstore', entry.name));
    }
    writeFileSync(
      path.join(changed, 'dev_databases', 'bookstore', 'bookstore.sqlite'),
      Buffer.concat([readFileSync(path.join(bookstore, 'bookstore.sqlite')), Buffer.alloc(4096)]),
    );
    await expect(
      serveDataset({ config: config(out, { source: changed, dbIds: ['bookstore'] }), host: '127.0.0.1', port: 0 }),
    ).rejects.toThrow(SourceError);

    // Endpoints of an older dataset format (answering {columns, rows}) are refused, saying what to do.
    const older = path.join(dir, 'format-1');
    mkdirSync(path.join(older, 'rest', 'endpoints'), { recursive: true });
    const served = JSON.parse(readFileSync(path.join(out, 'rest', 'endpoints', 'bookstore.json'), 'utf8'));
    delete served.formatVersion;
    writeFileSync(path.join(older, 'rest', 'endpoints', 'bookstore.json'), JSON.stringify(served));
    await expect(
      serveDataset({ config: config(older, { source: demo, dbIds: ['bookstore'] }), host: '127.0.0.1', port: 0 }),
    ).rejects.toThrow(/dataset format 1, this nl2api serves format 2; run generate again/);
  });

  test('a rerun serves everything from the cache, byte-identical, without starting a server', async () => {
    const again = path.join(dir, 'again');
    const result = await generate({
      config: { ...config(again, { source: demo }), cacheDir: path.join(out, '.cache') },
    });
    const stages = result.stats!.timing.stages;
    expect(stages['rest.synthesize'].runs).toBe(0);
    expect(stages['rest.verify'].runs).toBe(0);
    expect(stages['rest.verify'].cacheHits).toBeGreaterThan(0);
    for (const db of ['bookstore', 'cycling_club']) {
      expect(readFileSync(path.join(again, 'rest', `${db}.jsonl`), 'utf8')).toBe(
        readFileSync(path.join(out, 'rest', `${db}.jsonl`), 'utf8'),
      );
    }
  });
});

describe('REST on a small JSONL source: dedup merges, failures counted', () => {
  test('equivalent SQL becomes one endpoint; bad SQL is rejected at the right stage; counts add up', async () => {
    const source = path.join(dir, 'jsonl-source');
    mkdirSync(source, { recursive: true });
    copyFileSync(
      path.join(demo, 'dev_databases', 'bookstore', 'bookstore.sqlite'),
      path.join(source, 'bookstore.sqlite'),
    );
    const q = (id: string, sql: string) => JSON.stringify({ id, db_id: 'bookstore', question: `question ${id}`, sql });
    writeFileSync(
      path.join(source, 'questions.jsonl'),
      [
        q('a', "SELECT title FROM book WHERE genre = 'Mystery'"),
        q('b', "select T.title from book AS T where T.genre = 'Poetry'"),
        q('c', 'SELECT no_such_column FROM book'),
        q('d', 'DELETE FROM book'),
        q('e', 'SELECT COUNT(*) FROM book'),
      ].join('\n'),
    );
    const out = path.join(dir, 'jsonl-out');
    const result = await generate({ config: config(out, { source }) });
    const stats = result.stats!;
    const rest = stats.formulations.rest!;
    expect(rest.total).toMatchObject({ input: 5, accepted: 3, rejected: 2 });
    expect(Object.keys(rest.total.rejectedBy).every((reason) => reason.startsWith('gold:'))).toBe(true);
    expect(stats.rest!.byDb.bookstore).toEqual({ before: 3, after: 2, published: 2 });
    expect(stats.rest!.merges).toEqual([
      expect.objectContaining({
        db: 'bookstore',
        kept: 'a',
        merged: 'b',
        reason: expect.stringMatching(/equivalent SQL/),
      }),
    ]);
    const samples = readJsonl(path.join(out, 'rest', 'bookstore.jsonl')) as RestSampleLine[];
    const [a, b] = samples;
    expect(b.output[0].name).toBe(a.output[0].name);
    expect(Object.values(b.output[0].arguments)).toEqual(['Poetry']);
    const database = readFileSync(path.join(source, 'bookstore.sqlite'));
    expect(database.equals(readFileSync(path.join(demo, 'dev_databases', 'bookstore', 'bookstore.sqlite')))).toBe(true);
  });
});

test('an interrupted REST run starts nothing more: no gold runs once the signal has fired', async () => {
  const out = path.join(dir, 'aborted');
  let statements = 0;
  const executor = createDirectExecutor();
  const counting = {
    run(request: SqlRequest) {
      statements++;
      return executor.run(request);
    },
    buildVariantTable: (request: VariantTableRequest) => executor.buildVariantTable(request),
    close: () => executor.close(),
  };
  const result = await generate({
    config: config(out, { source: demo }),
    executor: counting,
    signal: AbortSignal.abort(),
  });
  await executor.close();
  expect(result.aborted).toBe(true);
  expect(statements).toBe(0);
});
