import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sha256 } from '../../core/hash.js';
import { ExportWriter } from '../../export/writer.js';

/** The export's file writer: streamed pieces, content hashes, unchanged files left alone, stale files removed. */

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'nl2api-writer-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

test('lines of text and shared bytes are written in order, each line ended, and hashed as written', async () => {
  const shared = Buffer.from('{"tool":"é"}');
  const writer = new ExportWriter(dir, {});
  await writer.writeLines('a/lines.jsonl', ['first', ['{"tools":[', shared, ',', shared, ']}'], '']);
  const text = await readFile(path.join(dir, 'a/lines.jsonl'), 'utf8');
  expect(text).toBe('first\n{"tools":[{"tool":"é"},{"tool":"é"}]}\n\n');
  expect(await writer.finish()).toEqual({ 'a/lines.jsonl': sha256(Buffer.from(text)) });
  expect(writer.written).toBe(1);
  expect(await readdir(path.join(dir, 'a'))).toEqual(['lines.jsonl']); // no temporary left
});

test('a file whose content the last export wrote is left alone; a file it wrote and this one did not is removed', async () => {
  const first = new ExportWriter(dir, {});
  await first.writePieces('kept.json', ['[1, ', Buffer.from('2'), ']']);
  await first.write('stale.json', '{}');
  const previous = await first.finish();
  const before = (await stat(path.join(dir, 'kept.json'))).mtimeMs;
  await new Promise((resolve) => setTimeout(resolve, 20));

  const second = new ExportWriter(dir, previous);
  await second.writePieces('kept.json', ['[1, 2]']); // the same bytes, in other pieces
  await second.write('new.json', '[]');
  expect(await second.finish()).toEqual({ 'kept.json': previous['kept.json'], 'new.json': sha256('[]') });
  expect(second.written).toBe(1);
  expect((await stat(path.join(dir, 'kept.json'))).mtimeMs).toBe(before);
  expect((await readdir(dir)).sort()).toEqual(['kept.json', 'new.json']);
});

test('a file the last export recorded but that is gone is written again', async () => {
  const first = new ExportWriter(dir, {});
  await first.writeLines('x.jsonl', ['1']);
  const previous = await first.finish();
  await rm(path.join(dir, 'x.jsonl'));
  const second = new ExportWriter(dir, previous);
  await second.writeLines('x.jsonl', ['1']);
  expect(second.written).toBe(1);
  expect(await readFile(path.join(dir, 'x.jsonl'), 'utf8')).toBe('1\n');
});

test('lines that fail while streaming leave neither the file nor a temporary behind, and the old file intact', async () => {
  await writeFile(path.join(dir, 'f.jsonl'), 'old\n');
  const writer = new ExportWriter(dir, {});
  function* failing() {
    yield 'a';
    throw new Error('a line could not be made');
  }
  await expect(writer.writeLines('f.jsonl', failing())).rejects.toThrow('a line could not be made');
  expect(await readdir(dir)).toEqual(['f.jsonl']);
  expect(await readFile(path.join(dir, 'f.jsonl'), 'utf8')).toBe('old\n');
});
