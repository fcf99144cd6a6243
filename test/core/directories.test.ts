import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makeDirectory, makeDirectoryAsync } from '../../core/directories.js';

/** Folders made one missing component at a time: never node's recursive mkdir, which spins where procfs answers ENOENT. */
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'nl2api-dirs-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe.each([
  ['sync', async (at: string) => makeDirectory(at)],
  ['async', makeDirectoryAsync],
] as const)('makeDirectory (%s)', (_, make) => {
  test('makes the missing parents; an existing folder is fine', async () => {
    const deep = path.join(dir, 'a', 'b', 'c');
    await make(deep);
    expect(statSync(deep).isDirectory()).toBe(true);
    await make(deep);
    await make(dir);
  });

  test('a file in the way is ENOTDIR, at it or above it', async () => {
    const file = path.join(dir, 'file');
    writeFileSync(file, 'x');
    await expect(make(file)).rejects.toMatchObject({ code: 'ENOTDIR' });
    await expect(make(path.join(file, 'below'))).rejects.toMatchObject({ code: 'ENOTDIR' });
  });

  test('many at once over the same path all succeed', async () => {
    const deep = path.join(dir, 'x', 'y', 'z');
    await Promise.all(Array.from({ length: 8 }, () => make(deep)));
    expect(existsSync(deep)).toBe(true);
  });

  (existsSync('/proc/self') ? test : test.skip)(
    'a filesystem that makes no folders answers at once (/proc)',
    async () => {
      await expect(make('/proc/nl2api-x/y')).rejects.toMatchObject({ code: 'ENOENT', path: '/proc/nl2api-x' });
    },
  );
});
