import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { parseConfig } from '../config/load.js';
import type { ServedEndpoints } from '../pipeline/emit-rest.js';
import { serveDataset } from '../pipeline/serve.js';
import type { EndpointSpec, ParameterSpec } from '../runtime/rest/spec.js';
import { validValue } from './type-sweep.js';

/**
 * Issue 14's bad-input bars, over EVERY endpoint of a generated REST output served by the real
 * server (`nl2api serve`'s serveDataset): missing, mistyped, huge, NUL, invalid UTF-8 and
 * malformed percent-escapes, duplicated and unknown parameters, SQL injection, path traversal,
 * other methods, HEAD, 100 KB query strings, long paths and headers. Bars: no status >= 500
 * but the deliberate 503/504 (counted apart), every error body our JSON format and <= 2 KB,
 * HEAD without a body, 405 with `Allow: GET, HEAD`, and every served database file unchanged.
 * Only statuses and error bodies are read: success bodies may take any shape.
 */

export const SWEEP_KINDS = [
  'missing-required',
  'wrong-type',
  'huge-value',
  'nul-byte',
  'invalid-utf8',
  'malformed-escape',
  'duplicated',
  'unknown-one',
  'unknown-1000',
  'sql-injection',
  'path-traversal',
  'other-method',
  'head',
  'query-100kb',
  'long-path',
  'long-header',
] as const;
export type SweepKind = (typeof SWEEP_KINDS)[number];

interface Case {
  kind: SweepKind;
  method: string;
  /** Raw request target, sent as is (already percent-encoded where it means to be). */
  target: string;
  headers?: Record<string, string>;
  body?: string;
  /** The statuses this input should get (a surprise is reported, not a bar). */
  expect: (status: number) => boolean;
  /** HEAD: the status GET gets for the same target. */
  sameAsGet?: boolean;
}

export interface KindFigures {
  requests: number;
  statuses: Record<string, number>;
  /** Statuses other than the expected ones (reported, not a bar). */
  unexpected: number;
  violations: number;
}

export interface SweepFigures {
  databases: number;
  endpoints: number;
  requests: number;
  seconds: number;
  byKind: Record<SweepKind, KindFigures>;
  /** Responses >= 500 other than 503/504: the bar is 0. */
  serverErrors: number;
  /** The deliberate ones: admission control (503) and the query time limit (504). */
  deliberate503: number;
  deliberate504: number;
  /** Error bodies not `{"error":{"code","message"}}` JSON, or over 2 KB; HEAD with a body; 405 without Allow. */
  badBodies: number;
  oversizeBodies: number;
  headWithBody: number;
  headNotAsGet: number;
  missingAllow: number;
  /** Requests that got no response at all (the connection dropped or hung). */
  noResponse: number;
  databaseFiles: number;
  databasesUnchanged: boolean;
  /** A few violations and surprises, for the reader. */
  examples: string[];
}

const MAX_ERROR_BODY = 2048;
const CONCURRENCY = 32;
const ALLOW = 'GET, HEAD';
const OTHER_METHODS = ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'];
const INJECTIONS = [
  "' OR '1'='1",
  "'; DROP TABLE sqlite_master; --",
  '1); DELETE FROM sqlite_master; --',
  "' UNION SELECT name, sql FROM sqlite_master --",
  "x' ; ATTACH DATABASE '/tmp/nl2api-pwned.sqlite' AS p; --",
  "'||(SELECT group_concat(name) FROM sqlite_master)||'",
  '1 OR 1=1',
  ':region',
  '?1',
  "\\'; PRAGMA writable_schema=1; --",
];
const TRAVERSALS = [
  '/../../../../etc/passwd',
  '/%2e%2e/%2e%2e/%2e%2e/etc/passwd',
  '/..%2f..%2f..%2fetc%2fpasswd',
  '%2f..%2f..%2fopenapi.json',
  '/..%5c..%5cpackage.json',
  '/%252e%252e/%252e%252e/etc/passwd',
];
const GLOBAL_TRAVERSALS = [
  '/docs/../../../../etc/passwd',
  '/docs/static/../../../../package.json',
  '/docs/static/%2e%2e/%2e%2e/%2e%2e/package.json',
  '/docs/static/..%2f..%2f..%2f..%2fpackage.json',
  '/docs/static/%2e%2e%2f%2e%2e%2f%2e%2e%2fetc%2fpasswd',
  '/%2e%2e/%2e%2e/etc/passwd',
  '/v1/../openapi.json',
];

const enc = encodeURIComponent;
const is =
  (...statuses: number[]) =>
  (status: number) =>
    statuses.includes(status);
const clientError = (status: number) => status >= 400 && status < 500;

function query(pairs: readonly (readonly [string, string])[]): string {
  return pairs.map(([name, value]) => `${name}=${value}`).join('&');
}

/** The bad inputs of one endpoint. */
export function endpointCases(endpoint: EndpointSpec): Case[] {
  const params = endpoint.parameters;
  const valid = params.filter((p) => p.required).map((p) => [p.name, enc(String(validValue(p)))] as const);
  const url = (pairs: readonly (readonly [string, string])[]) =>
    pairs.length ? `${endpoint.path}?${query(pairs)}` : endpoint.path;
  const base = url(valid);
  /** The valid query with one parameter's value replaced (raw text, as sent). */
  const withValue = (param: ParameterSpec, raw: string) =>
    url([...valid.filter(([name]) => name !== param.name), [param.name, raw]]);
  const cases: Case[] = [];
  const add = (kind: SweepKind, target: string, expect: Case['expect'], extra: Partial<Case> = {}) =>
    cases.push({ kind, method: 'GET', target, expect, ...extra });

  for (const param of params.filter((p) => p.required))
    add('missing-required', url(valid.filter(([name]) => name !== param.name)), is(400));
  for (const param of params) {
    const wrong = {
      string: [],
      integer: ['abc', '1.5', '0x10', '0b11', ' 1 ', '1e3x', '', 'true'],
      number: ['abc', 'NaN', '1,5', '', '--1'],
      boolean: ['maybe', '2', 'yes!', ''],
    }[param.type];
    for (const value of wrong) add('wrong-type', withValue(param, enc(value)), is(400));
    const huge = {
      string: ['x'.repeat(1001), 'x'.repeat(12_000), '\u00e9'.repeat(3000)],
      integer: ['9'.repeat(400), String(2 ** 53), `-${'9'.repeat(30)}`],
      number: ['1e400', '-1e400', 'Infinity', '9'.repeat(400)],
      boolean: ['t'.repeat(12_000)],
    }[param.type];
    for (const value of huge) add('huge-value', withValue(param, enc(value)), is(400, 431));
    for (const raw of ['a%00b', '%00', '1%00']) add('nul-byte', withValue(param, raw), is(400));
    add('nul-byte', `${base}${base.includes('?') ? '&' : '?'}${enc(param.name)}%00=1`, is(400));
    for (const raw of ['%C3%28', '%FF', '%C0%AF', '%ED%A0%80', '%F4%90%80%80', 'a%E2%82'])
      add('invalid-utf8', withValue(param, raw), is(400));
    add('invalid-utf8', `${base}${base.includes('?') ? '&' : '?'}%FF%FE=1`, is(400));
    for (const raw of ['%zz', '%', '%4', 'a%%b', '%%%']) add('malformed-escape', withValue(param, raw), is(400));
    for (const second of [validValue(param), 'other'])
      add('duplicated', `${withValue(param, enc(validValue(param)))}&${param.name}=${enc(second)}`, is(400));
    if (param.type === 'string')
      for (const value of INJECTIONS) add('sql-injection', withValue(param, enc(value)), (status) => status < 500);
    else for (const value of INJECTIONS.slice(0, 3)) add('sql-injection', withValue(param, enc(value)), is(400));
  }
  const more = base.includes('?') ? '&' : '?';
  add('sql-injection', `${base}${more}${enc("x'--")}=1`, is(400));
  add('invalid-utf8', `${endpoint.path}%C3%28${base.slice(endpoint.path.length)}`, is(400, 404));
  add('malformed-escape', `${endpoint.path}%zz${base.slice(endpoint.path.length)}`, is(400, 404));
  add('malformed-escape', `${endpoint.path}%${base.slice(endpoint.path.length)}`, is(400, 404));
  add('nul-byte', `${endpoint.path}%00${base.slice(endpoint.path.length)}`, is(400, 404));
  add('unknown-one', `${base}${more}zz_unknown=1`, is(400));
  const thousand = Array.from({ length: 1000 }, (_, i) => `u${i}=1`).join('&');
  add('unknown-1000', `${base}${more}${thousand}`, is(400));
  for (const traversal of TRAVERSALS) add('path-traversal', `${endpoint.path}${traversal}`, is(400, 403, 404));
  for (const method of OTHER_METHODS) {
    cases.push({ kind: 'other-method', method, target: base, expect: is(405) });
  }
  cases.push({
    kind: 'other-method',
    method: 'POST',
    target: base,
    headers: { 'content-type': 'application/json' },
    body: '{"not": json',
    expect: is(405),
  });
  cases.push({
    kind: 'other-method',
    method: 'PUT',
    target: base,
    headers: { 'content-type': 'application/x-unknown' },
    body: 'x'.repeat(2000),
    expect: is(405),
  });
  cases.push({ kind: 'head', method: 'HEAD', target: base, expect: () => true, sameAsGet: true });
  cases.push({ kind: 'head', method: 'HEAD', target: `${base}${more}zz_unknown=1`, expect: is(400), sameAsGet: true });
  add('query-100kb', `${base}${more}pad=${'a'.repeat(100_000)}`, is(400, 414, 431));
  add('query-100kb', `${base}${more}${'a=1&'.repeat(25_000)}`, is(400, 414, 431));
  add('long-path', `${endpoint.path}/${'a'.repeat(8000)}`, is(404));
  add('long-path', `${endpoint.path}${'/a'.repeat(10_000)}`, is(404, 414, 431));
  add('long-header', base, is(431), { headers: { 'x-long': 'h'.repeat(20_000) } });
  add('long-header', base, () => true, { headers: { 'x-long': 'h'.repeat(8000) } });
  add('long-header', base, is(431), {
    headers: Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`x-h${i}`, 'v'.repeat(80)])),
  });
  return cases;
}

/** Inputs not about one endpoint: traversal out of /docs and the API root, methods on /openapi.json and /docs. */
function globalCases(): Case[] {
  return [
    ...GLOBAL_TRAVERSALS.map((target): Case => ({
      kind: 'path-traversal',
      method: 'GET',
      target,
      expect: is(400, 403, 404),
    })),
    // A body past Fastify's 1 MB limit: refused for its method, unread.
    { kind: 'other-method', method: 'POST', target: '/openapi.json', body: 'x'.repeat(2_000_000), expect: is(405) },
    ...['/openapi.json', '/docs'].flatMap((target) =>
      OTHER_METHODS.map((method): Case => ({ kind: 'other-method', method, target, expect: is(405) })),
    ),
  ];
}

interface Response {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

function send(base: URL, agent: Agent, c: Case): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: base.hostname,
        port: base.port,
        method: c.method,
        path: c.target,
        agent,
        headers: { ...c.headers, ...(c.body !== undefined ? { 'content-length': Buffer.byteLength(c.body) } : {}) },
        timeout: 60_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('no response in 60 s')));
    req.on('error', reject);
    req.end(c.body);
  });
}

/** Why an error body is not in the project's format, or null. */
export function errorBodyProblem(body: Buffer): string | null {
  if (body.length > MAX_ERROR_BODY) return `body of ${body.length} bytes`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return `not JSON: ${JSON.stringify(body.toString('utf8').slice(0, 80))}`;
  }
  const error = (parsed as { error?: unknown } | null)?.error as Record<string, unknown> | undefined;
  const keys = (o: object) => Object.keys(o).sort().join(',');
  if (
    typeof parsed !== 'object' ||
    parsed === null ||
    keys(parsed) !== 'error' ||
    typeof error !== 'object' ||
    error === null ||
    keys(error) !== 'code,message' ||
    typeof error.code !== 'string' ||
    typeof error.message !== 'string'
  )
    return `not {"error":{"code","message"}}: ${body.toString('utf8').slice(0, 120)}`;
  return null;
}

function hashDatabases(birdDir: string): Map<string, string> {
  const root = path.join(birdDir, 'dev_databases');
  const hashes = new Map<string, string>();
  for (const db of readdirSync(root).sort())
    for (const file of readdirSync(path.join(root, db)).sort()) {
      const full = path.join(root, db, file);
      // Every file beside the database too: a -wal or -journal appearing would be a write.
      if (file.endsWith('.sqlite') || file.includes('.sqlite-'))
        hashes.set(full, createHash('sha256').update(readFileSync(full)).digest('hex'));
    }
  return hashes;
}

const sameHashes = (a: Map<string, string>, b: Map<string, string>) =>
  a.size === b.size && [...a].every(([file, hash]) => b.get(file) === hash);

export async function badInputSweep(output: string, birdDir: string): Promise<SweepFigures> {
  const endpointsDir = path.join(output, 'rest', 'endpoints');
  const served = readdirSync(endpointsDir)
    .sort()
    .map((file) => JSON.parse(readFileSync(path.join(endpointsDir, file), 'utf8')) as ServedEndpoints);
  const endpoints = served.flatMap((s) => s.endpoints);
  const cases = [...endpoints.flatMap(endpointCases), ...globalCases()];
  const before = hashDatabases(birdDir);
  const byKind = Object.fromEntries(
    SWEEP_KINDS.map((kind) => [kind, { requests: 0, statuses: {}, unexpected: 0, violations: 0 }]),
  ) as Record<SweepKind, KindFigures>;
  const figures: SweepFigures = {
    databases: served.length,
    endpoints: endpoints.length,
    requests: 0,
    seconds: 0,
    byKind,
    serverErrors: 0,
    deliberate503: 0,
    deliberate504: 0,
    badBodies: 0,
    oversizeBodies: 0,
    headWithBody: 0,
    headNotAsGet: 0,
    missingAllow: 0,
    noResponse: 0,
    databaseFiles: before.size,
    databasesUnchanged: false,
    examples: [],
  };
  const note = (text: string) => void (figures.examples.length < 12 && figures.examples.push(text));
  const config = parseConfig({ source: birdDir, out: output, progress: 'none' });
  const handle = await serveDataset({ config, host: '127.0.0.1', port: 0 });
  const base = new URL(handle.server.url);
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const shown = (c: Case) => `${c.kind} ${c.method} ${c.target.slice(0, 100)}${c.target.length > 100 ? '…' : ''}`;

  const check = async (c: Case): Promise<void> => {
    const kind = byKind[c.kind];
    kind.requests++;
    figures.requests++;
    let response: Response;
    try {
      response = await send(base, agent, c);
    } catch (error) {
      figures.noResponse++;
      kind.violations++;
      return note(`no response: ${shown(c)}: ${(error as Error).message}`);
    }
    const { status, body, headers } = response;
    kind.statuses[status] = (kind.statuses[status] ?? 0) + 1;
    let violation = false;
    const flag = (text: string) => {
      violation = true;
      note(`${text}: ${shown(c)}`);
    };
    if (status === 503) figures.deliberate503++;
    else if (status === 504) figures.deliberate504++;
    else if (status >= 500) {
      figures.serverErrors++;
      flag(`status ${status}`);
    }
    if (c.method === 'HEAD') {
      if (body.length > 0) {
        figures.headWithBody++;
        flag('HEAD with a body');
      }
      const get = await send(base, agent, { ...c, method: 'GET' }).catch(() => null);
      if (get && get.status !== status) {
        figures.headNotAsGet++;
        flag(`HEAD ${status} but GET ${get.status}`);
      }
    } else if (status >= 400) {
      const problem = errorBodyProblem(body);
      if (problem) {
        if (body.length > MAX_ERROR_BODY) figures.oversizeBodies++;
        else figures.badBodies++;
        flag(`${status} ${problem}`);
      }
    }
    if (status === 405 && headers.allow !== ALLOW) {
      figures.missingAllow++;
      flag(`405 with Allow ${String(headers.allow)}`);
    }
    if (violation) kind.violations++;
    else if (!clientError(status) && c.kind === 'path-traversal') {
      kind.violations++;
      note(`traversal answered ${status}: ${shown(c)}`);
    } else if (!c.expect(status)) {
      kind.unexpected++;
      note(`unexpected ${status}: ${shown(c)}`);
    }
  };

  const started = performance.now();
  try {
    let next = 0;
    const lane = async () => {
      while (next < cases.length) await check(cases[next++]);
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, lane));
  } finally {
    figures.seconds = (performance.now() - started) / 1000;
    agent.destroy();
    await handle.close();
  }
  figures.databasesUnchanged = sameHashes(before, hashDatabases(birdDir));
  return figures;
}

export function sweepLines(f: SweepFigures): string[] {
  const ok = (pass: boolean) => (pass ? 'ok' : 'MISSED');
  const perKind = SWEEP_KINDS.map((kind) => {
    const k = f.byKind[kind];
    const statuses = Object.entries(k.statuses)
      .map(([status, n]) => `${status}×${n}`)
      .join(' ');
    return `  ${kind.padEnd(17)} ${String(k.requests).padStart(6)} requests: ${statuses}${k.violations ? `; ${k.violations} VIOLATIONS` : ''}${k.unexpected ? `; ${k.unexpected} unexpected` : ''}`;
  });
  const bodies = f.badBodies + f.oversizeBodies + f.headWithBody + f.missingAllow + f.headNotAsGet;
  return [
    `REST bad-input sweep: ${f.requests} requests over all ${f.endpoints} endpoints of ${f.databases} databases in ${f.seconds.toFixed(1)} s (${CONCURRENCY} at once, nl2api serve's server)`,
    ...perKind,
    `  status >= 500 other than 503/504: ${f.serverErrors} (target 0: ${ok(f.serverErrors === 0)}); deliberate 503 ${f.deliberate503}, 504 ${f.deliberate504}; no response ${f.noResponse}`,
    `  error bodies not {"error":{"code","message"}}: ${f.badBodies}, over 2 KB: ${f.oversizeBodies}; HEAD with a body ${f.headWithBody}, HEAD unlike GET ${f.headNotAsGet}; 405 without Allow: GET, HEAD ${f.missingAllow} (target 0: ${ok(bodies === 0)})`,
    `  database files unchanged (sha256 of ${f.databaseFiles} before and after): ${f.databasesUnchanged ? 'yes' : 'NO'} (${ok(f.databasesUnchanged)})`,
    ...f.examples.map((e) => `  e.g. ${e}`),
  ];
}

/** `node dist/bench/bad-input-sweep.js <generated output> [<bird dir>]`: the sweep alone. */
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [output, birdDir = process.env.NL2API_BIRD_DIR ?? '../shared/bird-dev'] = process.argv.slice(2);
  const figures = await badInputSweep(path.resolve(output), path.resolve(birdDir));
  process.stdout.write(`${sweepLines(figures).join('\n')}\n`);
}
