import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { jsonlText, jsonText } from '../../pipeline/files.js';
import { sha256 } from '../../core/hash.js';
import {
  diffOutputs,
  latestVersion,
  listVersions,
  publishVersion,
  versionDir,
  type OutputDiff,
} from '../../pipeline/versions.js';

let base: string;
beforeEach(() => {
  base = mkdtempSync(path.join(os.tmpdir(), 'nl2api-versions-'));
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

type Line = Record<string, unknown>;
/** A fake run output: per relative path, its JSONL lines (or raw text); plus the manifest listing them. */
type FakeOutput = Record<string, Line[] | string>;

function sample(formulation: string, id: string, input = `question ${id}`): Line {
  return { sample_id: id, dataset_name: 'toy', formulation, input, output: [] };
}

function samples(formulation: string, ids: string[]): Line[] {
  return ids.map((id) => sample(formulation, id));
}

function writeOutput(dir: string, output: FakeOutput): string {
  mkdirSync(dir, { recursive: true });
  const files = Object.entries(output).map(([relative, content]) => {
    const text = typeof content === 'string' ? content : jsonlText(content);
    const full = path.join(dir, ...relative.split('/'));
    mkdirSync(path.dirname(full), { recursive: true });
    writeFileSync(full, text);
    return { path: relative, sha256: sha256(text), bytes: Buffer.byteLength(text) };
  });
  files.sort((a, b) => (a.path < b.path ? -1 : 1));
  writeFileSync(path.join(dir, 'manifest.json'), jsonText({ dataset: 'toy', counts: {}, files }));
  writeFileSync(path.join(dir, 'stats.json'), jsonText({ timing: { wallMs: 1 } }));
  return dir;
}

function writeVersion(version: string, output: FakeOutput): string {
  return writeOutput(versionDir(base, version), output);
}

/** The non-sample artifacts a real run writes next to the samples: the diff must ignore them. */
const artifacts: FakeOutput = {
  'tools/slot/shop.json': '[]\n',
  'openapi/slot/shop.json': '{}\n',
  'rest/endpoints/shop.json': '{"db":"shop","endpoints":[]}\n',
  'rejections.jsonl': jsonlText([{ id: '9', db: 'shop', formulation: 'slot', stage: 'gold' }]),
};

const empty = { added: 0, removed: 0, changed: 0, unchanged: 0, addedIds: [], removedIds: [], changedIds: [] };

describe('diffOutputs', () => {
  test('first version: everything is added, per formulation, ids sorted (numerically within a database)', async () => {
    const dir = writeVersion('v1', {
      ...artifacts,
      'slot/shop.jsonl': samples('slot', ['10', '2', '1']),
      'slot/club.jsonl': samples('slot', ['0']),
      'rest/shop.jsonl': samples('rest', ['1']),
    });
    const diff = await diffOutputs(null, dir);
    expect(diff.previous).toBeNull();
    expect(diff.current).toBe(dir);
    expect(Object.keys(diff.formulations)).toEqual(['rest', 'slot']);
    expect(diff.formulations.slot).toEqual({ ...empty, added: 4, addedIds: ['club/0', 'shop/1', 'shop/2', 'shop/10'] });
    expect(diff.formulations.rest).toEqual({ ...empty, added: 1, addedIds: ['shop/1'] });
    expect(diff.totals).toEqual({ added: 5, removed: 0, changed: 0, unchanged: 0 });
  });

  test('identical outputs: every sample unchanged (the sha256 fast path), other artifacts ignored', async () => {
    const output = {
      ...artifacts,
      'slot/shop.jsonl': samples('slot', ['0', '1', '2']),
      'sel/shop.jsonl': samples('sel', ['0']),
    };
    const v1 = writeVersion('v1', output);
    const v2 = writeVersion('v2', {
      ...output,
      'tools/slot/shop.json': '[{"changed":true}]\n',
      'rejections.jsonl': '',
    });
    const diff = await diffOutputs(v1, v2);
    expect(diff.formulations).toEqual({ sel: { ...empty, unchanged: 1 }, slot: { ...empty, unchanged: 3 } });
    expect(diff.totals).toEqual({ added: 0, removed: 0, changed: 0, unchanged: 4 });
  });

  test('the fast path does not parse the file: equal hashes count lines, even of lines it could not parse', async () => {
    // Not valid JSONL: only a parse would notice, so an unchanged file is never parsed.
    const output = { 'slot/shop.jsonl': 'not json\nnor this\n' };
    const diff = await diffOutputs(writeVersion('v1', output), writeVersion('v2', output));
    expect(diff.formulations.slot).toEqual({ ...empty, unchanged: 2 });
    // A changed file is parsed, and a line without a sample_id is an error.
    await expect(
      diffOutputs(versionDir(base, 'v1'), writeVersion('v3', { 'slot/shop.jsonl': 'not json\n' })),
    ).rejects.toThrow(/slot\/shop\.jsonl:1: not a JSON line/);
  });

  test('a changed line, an added and a removed sample, in one database; the other database unchanged', async () => {
    const v1 = writeVersion('v1', {
      'slot/shop.jsonl': samples('slot', ['0', '1', '2']),
      'slot/club.jsonl': samples('slot', ['0', '1']),
    });
    const v2 = writeVersion('v2', {
      // '1' dropped, '3' new, '2' reworded, '0' as it was.
      'slot/shop.jsonl': [sample('slot', '0'), sample('slot', '2', 'question 2, reworded'), sample('slot', '3')],
      'slot/club.jsonl': samples('slot', ['0', '1']),
    });
    const diff = await diffOutputs(v1, v2);
    expect(diff.formulations.slot).toEqual({
      added: 1,
      removed: 1,
      changed: 1,
      unchanged: 3,
      addedIds: ['shop/3'],
      removedIds: ['shop/1'],
      changedIds: ['shop/2'],
    });
    expect(diff.totals).toEqual({ added: 1, removed: 1, changed: 1, unchanged: 3 });
  });

  test('a reordered file changes no sample; a byte-level change to a line (key order) does', async () => {
    const v1 = writeVersion('v1', { 'slot/shop.jsonl': samples('slot', ['0', '1']) });
    const reordered = writeVersion('v2', { 'slot/shop.jsonl': samples('slot', ['1', '0']) });
    expect((await diffOutputs(v1, reordered)).formulations.slot).toEqual({ ...empty, unchanged: 2 });
    const { sample_id, ...rest } = sample('slot', '1');
    const rekeyed = writeVersion('v3', { 'slot/shop.jsonl': [sample('slot', '0'), { ...rest, sample_id }] });
    expect((await diffOutputs(v1, rekeyed)).formulations.slot).toEqual({
      ...empty,
      changed: 1,
      unchanged: 1,
      changedIds: ['shop/1'],
    });
  });

  test('a new database file and a new formulation appear; a dropped database file is all removed', async () => {
    const v1 = writeVersion('v1', {
      'slot/shop.jsonl': samples('slot', ['0']),
      'slot/gone.jsonl': samples('slot', ['5', '6']),
    });
    const v2 = writeVersion('v2', {
      'slot/shop.jsonl': samples('slot', ['0']),
      'slot/club.jsonl': samples('slot', ['1', '0']),
      'rest/shop.jsonl': samples('rest', ['0']),
    });
    const diff = await diffOutputs(v1, v2);
    expect(diff.formulations).toEqual({
      rest: { ...empty, added: 1, addedIds: ['shop/0'] },
      slot: {
        ...empty,
        added: 2,
        removed: 2,
        unchanged: 1,
        addedIds: ['club/0', 'club/1'],
        removedIds: ['gone/5', 'gone/6'],
      },
    });
  });

  test('an empty sample file (no accepted samples) counts nothing', async () => {
    const v1 = writeVersion('v1', { 'slot/shop.jsonl': '' });
    const v2 = writeVersion('v2', { 'slot/shop.jsonl': '' });
    expect((await diffOutputs(v1, v2)).formulations.slot).toEqual(empty);
    expect((await diffOutputs(null, v2)).formulations.slot).toEqual(empty);
  });

  test('reads only what the manifest lists, and only files that match their manifest entry', async () => {
    const v1 = writeVersion('v1', { 'slot/shop.jsonl': samples('slot', ['0']) });
    // A stray file not in the manifest is not an output.
    writeFileSync(path.join(v1, 'slot', 'stray.jsonl'), jsonlText(samples('slot', ['7'])));
    expect((await diffOutputs(null, v1)).formulations.slot.addedIds).toEqual(['shop/0']);
    // A listed file edited after the run no longer matches its sha256.
    writeFileSync(path.join(v1, 'slot', 'shop.jsonl'), jsonlText(samples('slot', ['0', '1'])));
    await expect(diffOutputs(null, v1)).rejects.toThrow(/does not match its manifest entry/);
    await expect(diffOutputs(null, path.join(base, 'nowhere'))).rejects.toThrow(/manifest\.json is missing/);
  });

  test('a sample_id repeated within a file is an error', async () => {
    const v1 = writeVersion('v1', { 'slot/shop.jsonl': samples('slot', ['0', '0']) });
    await expect(diffOutputs(null, v1)).rejects.toThrow(/sample_id 0 appears twice/);
  });
});

describe('latest.json and publishing', () => {
  test('no latest.json: no latest version, no versions', async () => {
    expect(await latestVersion(base)).toBeNull();
    expect(await listVersions(base)).toEqual([]);
  });

  test('publish writes diff.json, then latest.json; latestVersion reads it back', async () => {
    const v1 = writeVersion('2026-11-20T02-00-00Z', { 'slot/shop.jsonl': samples('slot', ['0', '1']) });
    const first = await diffOutputs(null, v1);
    await publishVersion(base, '2026-11-20T02-00-00Z', first, { now: new Date('2026-11-20T02:05:00.000Z') });
    expect(JSON.parse(readFileSync(path.join(base, 'latest.json'), 'utf8'))).toEqual({
      version: '2026-11-20T02-00-00Z',
      path: 'versions/2026-11-20T02-00-00Z',
      publishedAt: '2026-11-20T02:05:00.000Z',
    });
    expect(await latestVersion(base)).toEqual({ version: '2026-11-20T02-00-00Z', dir: v1 });
    const stored = JSON.parse(readFileSync(path.join(v1, 'diff.json'), 'utf8')) as OutputDiff;
    expect(stored).toEqual({ ...first, current: 'versions/2026-11-20T02-00-00Z' });

    // The next nightly run diffs against the latest and replaces it.
    const previous = await latestVersion(base);
    const v2 = writeVersion('2026-11-21T02-00-00Z', { 'slot/shop.jsonl': samples('slot', ['0', '1', '2']) });
    const second = await diffOutputs(previous!.dir, v2);
    await publishVersion(base, '2026-11-21T02-00-00Z', second);
    expect(await latestVersion(base)).toEqual({ version: '2026-11-21T02-00-00Z', dir: v2 });
    const pointer = JSON.parse(readFileSync(path.join(base, 'latest.json'), 'utf8'));
    expect(new Date(pointer.publishedAt).toISOString()).toBe(pointer.publishedAt);
    const storedSecond = JSON.parse(readFileSync(path.join(v2, 'diff.json'), 'utf8')) as OutputDiff;
    expect(storedSecond.previous).toBe('versions/2026-11-20T02-00-00Z');
    expect(storedSecond.current).toBe('versions/2026-11-21T02-00-00Z');
    expect(storedSecond.totals).toEqual({ added: 1, removed: 0, changed: 0, unchanged: 2 });
    expect(await listVersions(base)).toEqual(['2026-11-20T02-00-00Z', '2026-11-21T02-00-00Z']);
  });

  test('publish refuses an incomplete version and a diff of another directory', async () => {
    const v1 = writeVersion('v1', { 'slot/shop.jsonl': samples('slot', ['0']) });
    const diff = await diffOutputs(null, v1);
    mkdirSync(versionDir(base, 'v2'), { recursive: true });
    await expect(publishVersion(base, 'v2', diff)).rejects.toThrow(/manifest\.json is missing/);
    writeVersion('v3', { 'slot/shop.jsonl': samples('slot', ['0']) });
    await expect(publishVersion(base, 'v3', diff)).rejects.toThrow(/the diff is of/);
    expect(await latestVersion(base)).toBeNull();
  });

  test('a garbled latest.json, or one naming a missing version, is no latest version', async () => {
    const latest = path.join(base, 'latest.json');
    writeVersion('v1', { 'slot/shop.jsonl': samples('slot', ['0']) });
    for (const text of [
      '',
      '{"version": "v1", "path": "versions/v1"',
      'null',
      '[]',
      '{"path": "versions/v1"}',
      '{"version": "v1", "path": "versions/other"}',
      '{"version": "../v1", "path": "versions/../v1"}',
      '{"version": "missing", "path": "versions/missing", "publishedAt": "2026-11-21T02:00:00.000Z"}',
    ]) {
      writeFileSync(latest, text);
      expect(await latestVersion(base)).toBeNull();
    }
    writeFileSync(latest, '{"version": "v1", "path": "versions/v1", "publishedAt": "2026-11-21T02:00:00.000Z"}');
    expect(await latestVersion(base)).toEqual({ version: 'v1', dir: versionDir(base, 'v1') });
    // Its directory removed: none again, no throw.
    rmSync(versionDir(base, 'v1'), { recursive: true });
    expect(await latestVersion(base)).toBeNull();
  });

  test('version names are checked', async () => {
    for (const bad of [
      '',
      '.',
      '..',
      '../x',
      'a/b',
      'a\\b',
      'a..b',
      '.hidden',
      'has space',
      '2026-11-21T02:00:00Z',
      'é',
      'x'.repeat(201),
    ]) {
      expect(() => versionDir(base, bad)).toThrow(/invalid version name/);
      await expect(
        publishVersion(base, bad, {
          previous: null,
          current: base,
          formulations: {},
          totals: { added: 0, removed: 0, changed: 0, unchanged: 0 },
        }),
      ).rejects.toThrow(/invalid version name/);
    }
    for (const good of ['2026-11-21T02-00-00Z', 'run_42', 'v1.2.3', 'A-b_c.9']) {
      expect(versionDir(base, good)).toBe(path.join(base, 'versions', good));
    }
  });

  test('listVersions skips files and names that are not versions', async () => {
    writeVersion('b', {});
    writeVersion('a', {});
    mkdirSync(path.join(base, 'versions', '.tmp-run'), { recursive: true });
    writeFileSync(path.join(base, 'versions', 'file.txt'), 'x');
    expect(await listVersions(base)).toEqual(['a', 'b']);
  });
});
