import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cacheDirOf, ConfigError, loadConfig, parseConfig } from '../../config/load.js';
import { outputRelevantConfig } from '../../config/schema.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'nl2api-config-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function file(content: unknown): string {
  const p = path.join(dir, 'config.json');
  writeFileSync(p, typeof content === 'string' ? content : JSON.stringify(content));
  return p;
}

describe('config', () => {
  test('every knob has a default', async () => {
    const config = await loadConfig();
    expect(config).toEqual({
      formulations: ['slot', 'sel', 'rest'],
      pool: 'extended',
      concurrency: 8,
      sqlWorkers: 2,
      retries: 3,
      backoff: { baseMs: 100, maxMs: 5000 },
      chain: { attempts: 6, perFirst: 2, writer: 'auto', judge: false },
      goldTimeoutMs: 30000,
      referenceTime: '2026-01-01 00:00:00',
      executeTimeoutMs: 30000,
      out: 'output',
      cache: true,
      fingerprintCache: true,
      progress: 'auto',
      rest: {
        synthesizer: 'auto',
        attempts: 2,
        templateFallback: true,
        batchSize: 4,
        judge: true,
        dedupAgent: true,
        maxStringLength: 1000,
        serveTimeoutMs: 5000,
        serveMaxInFlight: 256,
        serveLanes: {
          fastBudgetMs: 40,
          promoteAfter: 8,
          slowWorkers: 2,
          fastMaxInFlight: 256,
          slowMaxInFlight: 64,
          recyclesPerMinute: 30,
        },
        trialTimeoutFactor: 20,
        trialMinMs: 500,
      },
      verification: {
        variants: 2,
        seed: 1,
        nondeterministicGold: 'reject',
        weakGold: 'keep',
        variantRows: 10000,
        buildTimeoutMs: 600000,
      },
    });
    expect(cacheDirOf(config)).toBe(path.resolve('output', '.cache'));
  });

  test("how a dataset is served is not part of what makes it (the manifest's config and its hash)", () => {
    const base = parseConfig({ formulations: ['rest'] });
    const served = parseConfig({
      formulations: ['rest'],
      rest: { serveTimeoutMs: 1234, serveMaxInFlight: 7, serveLanes: { fastBudgetMs: 99 } },
    });
    expect(outputRelevantConfig(served)).toEqual(outputRelevantConfig(base));
    expect(outputRelevantConfig(parseConfig({ formulations: ['rest'], rest: { attempts: 3 } }))).not.toEqual(
      outputRelevantConfig(base),
    );
  });

  test('defaults < config file < flags; nested objects merge', async () => {
    const p = file({ pool: 'paper', concurrency: 4, backoff: { baseMs: 10 }, out: 'gen', cache: false });
    const config = await loadConfig({
      file: p,
      flags: { concurrency: 16, backoff: { maxMs: 50 }, cacheDir: '/tmp/c' },
    });
    expect(config.pool).toBe('paper');
    expect(config.concurrency).toBe(16);
    expect(config.backoff).toEqual({ baseMs: 10, maxMs: 50 });
    expect(config.cache).toBe(false);
    // Paths in the file are relative to the file.
    expect(config.out).toBe(path.join(dir, 'gen'));
    expect(cacheDirOf(config)).toBe('/tmp/c');
  });

  test('flags that were not given override nothing', async () => {
    const p = file({ sqlWorkers: 5 });
    const config = await loadConfig({ file: p, flags: { sqlWorkers: undefined } });
    expect(config.sqlWorkers).toBe(5);
  });

  test.each([
    [{ concurrency: 0 }, /concurrency/],
    [{ concurrency: 2.5 }, /concurrency/],
    [{ pool: 'huge' }, /pool/],
    [{ formulations: ['slot', 'graphql'] }, /formulations/],
    [{ formulations: [] }, /formulations/],
    [{ retries: -1 }, /retries/],
    [{ backoff: { baseMs: 'fast' } }, /backoff/],
    [{ concurency: 3 }, /concurency/],
  ])('rejects %j with a message naming the field', (input, field) => {
    expect(() => parseConfig(input)).toThrow(ConfigError);
    expect(() => parseConfig(input)).toThrow(field);
  });

  test('a config file that is missing, not JSON, or not an object is a ConfigError', async () => {
    await expect(loadConfig({ file: path.join(dir, 'nope.json') })).rejects.toThrow(/cannot read config file/);
    await expect(loadConfig({ file: file('{ nope') })).rejects.toThrow(/not valid JSON/);
    await expect(loadConfig({ file: file([1, 2]) })).rejects.toThrow(/JSON object/);
    await expect(loadConfig({ file: file({ goldTimeoutMs: 'soon' }) })).rejects.toThrow(/goldTimeoutMs/);
  });
});
