import { makeDirectory } from '../core/directories.js';
import { mkdtempSync, rmdirSync, statSync } from 'node:fs';
import { UserFacingError } from '../core/errors.js';
import path from 'node:path';

/**
 * The machine, not the data, stops a command before it starts: a folder that cannot be
 * written, a port in use. The CLI prints the message alone and exits 1.
 */
export class SetupError extends UserFacingError {
  override name = 'SetupError';
}

/**
 * Makes sure `dir` is a folder this process can write, creating it if needed. Checked before
 * a run does any work: found at the end, it would cost the whole run. Writing is tried for
 * real (a probe folder, removed at once) because permission bits do not tell the whole story
 * (root ignores them, a read-only mount does not show in them).
 */
export function ensureWritableDir(dir: string, what: string): void {
  try {
    makeDirectory(dir);
    rmdirSync(mkdtempSync(path.join(dir, '.nl2api-write-check-')));
  } catch (error) {
    throw new SetupError(`${what} ${dir} cannot be written: ${whyNotWritable(dir, error as NodeJS.ErrnoException)}`);
  }
}

function whyNotWritable(dir: string, error: NodeJS.ErrnoException): string {
  const file = fileInTheWay(dir);
  if (file) return `${file} is a file, not a folder`;
  if (error.code === 'EACCES' || error.code === 'EPERM') return 'permission denied';
  if (error.code === 'EROFS') return 'read-only file system';
  // Under a folder that exists (the walk created the rest): the filesystem makes no folders there (procfs, say).
  if (error.code === 'ENOENT' && error.path) return `the filesystem would not create ${error.path}`;
  return error.message;
}

/** The nearest existing path at or above `dir`, when it is not a folder. */
function fileInTheWay(dir: string): string | undefined {
  for (let at = dir; path.dirname(at) !== at; at = path.dirname(at)) {
    let info;
    try {
      info = statSync(at);
    } catch {
      continue; // absent, or under a file: look further up
    }
    return info.isDirectory() ? undefined : at;
  }
  return undefined;
}
