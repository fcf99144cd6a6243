import { makeDirectory, makeDirectoryAsync } from '../core/directories.js';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { readdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * Writes a file atomically: a temporary sibling, then rename (atomic on one filesystem),
 * so a reader or a killed run never sees a half-written output file.
 */
export async function writeFileAtomic(file: string, content: string | Uint8Array): Promise<void> {
  await makeDirectoryAsync(path.dirname(file));
  const tmp = temporarySibling(file);
  try {
    await writeFile(tmp, content);
    await rename(tmp, file);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
}

/** A fresh name beside `file` for writing it before the rename that makes it appear whole. */
export function temporarySibling(file: string): string {
  return `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
}

const TEMPORARY_SIBLING = /\.(\d+)\.[0-9a-f]{8}\.tmp$/;

/**
 * Removes the temporary siblings a killed writer left under `dir` (a second Ctrl-C ends the
 * process mid-write): a rerun's outputs are then the files it wrote, nothing else. A file
 * of a process still alive is another writer's, and stays.
 */
export async function removeAbandonedTemporaries(dir: string): Promise<void> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    const pid = entry.isFile() ? TEMPORARY_SIBLING.exec(entry.name)?.[1] : undefined;
    if (pid !== undefined && !isAlive(Number(pid))) await rm(path.join(entry.parentPath, entry.name), { force: true });
  }
}

/** Whether a process of this pid exists (one of another user's counts: EPERM). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * `final` if it exists; otherwise built by `build` into `<final>.building-<pid>` and renamed.
 * Leftovers of builds whose process is gone (killed) are removed first.
 */
export async function buildDirectoryOnce(final: string, build: (dir: string) => Promise<void>): Promise<string> {
  if (existsSync(final)) return final;
  const parent = path.dirname(final);
  makeDirectory(parent);
  const prefix = `${path.basename(final)}.building-`;
  for (const name of readdirSync(parent)) {
    if (name.startsWith(prefix) && !isAlive(Number(name.slice(prefix.length)))) {
      rmSync(path.join(parent, name), { recursive: true, force: true });
    }
  }
  const dir = path.join(parent, `${prefix}${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir);
  try {
    await build(dir);
    renameSync(dir, final);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    // Another process finished the same directory meanwhile: use it.
    if (existsSync(final) && (error as NodeJS.ErrnoException).code === 'ENOTEMPTY') return final;
    throw error;
  }
  return final;
}

/** JSON files end with a newline and are indented: diff-friendly artifacts. */
export function jsonText(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

export function jsonlText(values: readonly unknown[]): string {
  return values.map((v) => `${JSON.stringify(v)}\n`).join('');
}
