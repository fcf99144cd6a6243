import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The package's root directory (where package.json is), found from this module's location
 * so that it works from the sources (tsx, jest) and from the build in dist/ alike.
 */
export function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(path.join(dir, 'package.json')) && existsSync(path.join(dir, 'seeds'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('cannot find the nl2api package root');
    dir = parent;
  }
}

let version: string | undefined;

/** The package's version (read once: a server names it in every session). */
export function packageVersion(): string {
  return (version ??= (
    JSON.parse(readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')) as { version: string }
  ).version);
}
