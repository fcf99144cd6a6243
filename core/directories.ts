import { mkdirSync, statSync } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';

/**
 * Creates a folder and its missing parents, one `mkdir` per missing component. Node's own
 * `mkdir(…, { recursive: true })` retries for as long as the filesystem answers ENOENT under
 * a parent that exists (procfs does, for `/proc/x`): a loop inside the call that no signal
 * handler can interrupt. Here the walk is as long as the path, and such a filesystem's error
 * comes back as it is.
 */
export function makeDirectory(dir: string): void {
  for (const missing of missingFolders(dir, (at) => statSync(at, { throwIfNoEntry: false }))) {
    try {
      mkdirSync(missing);
    } catch (error) {
      if (!createdMeanwhile(error, () => statSync(missing, { throwIfNoEntry: false }))) throw error;
    }
  }
}

/** `makeDirectory`, without blocking the event loop. */
export async function makeDirectoryAsync(dir: string): Promise<void> {
  const infos = new Map<string, Awaited<ReturnType<typeof statOrUndefined>>>();
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    const info = await statOrUndefined(at);
    infos.set(at, info);
    if (info || path.dirname(at) === at) break;
  }
  for (const missing of missingFolders(dir, (at) => infos.get(at))) {
    try {
      await mkdir(missing);
    } catch (error) {
      const now = await statOrUndefined(missing);
      if (!createdMeanwhile(error, () => now)) throw error;
    }
  }
}

interface FolderInfo {
  isDirectory(): boolean;
}

/** The folders to create, outermost first: the path's components up to the nearest one that exists (which must be a folder). */
function missingFolders(dir: string, infoOf: (at: string) => FolderInfo | undefined): string[] {
  const missing: string[] = [];
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    const info = infoOf(at);
    if (info) {
      if (!info.isDirectory()) throw notAFolder(at);
      break;
    }
    missing.unshift(at);
    if (path.dirname(at) === at) break;
  }
  return missing;
}

/** A concurrent process made the folder between the look and the mkdir: fine. */
function createdMeanwhile(error: unknown, infoNow: () => FolderInfo | undefined): boolean {
  return (error as NodeJS.ErrnoException).code === 'EEXIST' && infoNow()?.isDirectory() === true;
}

function notAFolder(at: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${at}'`), { code: 'ENOTDIR', path: at });
}

async function statOrUndefined(at: string) {
  try {
    return await stat(at);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
