import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageRoot } from '../core/package-root.js';

/**
 * The code part of every cache key: a hash of the package version, the versions of the
 * installed dependencies and the content of every module that can shape a stage's result
 * (the directories below, as this process loads them: compiled .js from dist/, or the .ts
 * sources under tsx and jest). A changed build recomputes everything, without anyone
 * remembering to bump a stage version; an unchanged build reuses everything. Computed once
 * per process (~100 small files).
 */

/** Directories, relative to the code root, whose modules stages load. */
export const CODE_DIRS = ['core', 'config', 'generators', 'pipeline', 'runtime', 'verifiers'] as const;

const cached = new Map<string, string>();

/** `dirs`: the code the results depend on (the evaluation adds its own folder to the pipeline's). */
export function codeFingerprint(dirs: readonly string[] = CODE_DIRS): string {
  const id = dirs.join(',');
  let known = cached.get(id);
  if (known === undefined) {
    const here = fileURLToPath(import.meta.url);
    const root = packageRoot();
    const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as Manifest;
    known = fingerprintOf({
      codeRoot: path.dirname(path.dirname(here)),
      extension: path.extname(here),
      version: manifest.version,
      dependencies: dependencyVersions(root, manifest),
      dirs,
    });
    cached.set(id, known);
  }
  return known;
}

export interface FingerprintInput {
  /** The directory holding CODE_DIRS. */
  codeRoot: string;
  /** `.js` or `.ts`: the modules this process runs. */
  extension: string;
  version: string;
  dependencies: Record<string, string>;
  /** Default CODE_DIRS. */
  dirs?: readonly string[];
}

export function fingerprintOf(input: FingerprintInput): string {
  const hash = createHash('sha256');
  hash.update(JSON.stringify({ version: input.version, dependencies: input.dependencies, extension: input.extension }));
  for (const dir of input.dirs ?? CODE_DIRS) {
    for (const file of modulesUnder(path.join(input.codeRoot, dir), input.extension)) {
      hash.update('\0').update(path.relative(input.codeRoot, file).split(path.sep).join('/')).update('\0');
      hash.update(readFileSync(file));
    }
  }
  return hash.digest('hex');
}

/** Module files below a directory, in a fixed (sorted) order. */
function modulesUnder(dir: string, extension: string): string[] {
  if (!existsSync(dir)) return [];
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) files.push(...modulesUnder(full, extension));
    else if (entry.name.endsWith(extension) && !entry.name.endsWith(`.d${extension}`)) files.push(full);
  }
  return files;
}

/** The installed version of each runtime dependency (a parser upgrade can change results). */
interface Manifest {
  version: string;
  dependencies?: Record<string, string>;
}

function dependencyVersions(root: string, manifest: Manifest): Record<string, string> {
  return Object.fromEntries(
    Object.keys(manifest.dependencies ?? {})
      .sort()
      .map((name) => [name, installedVersion(root, name)]),
  );
}

function installedVersion(from: string, name: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'node_modules', name, 'package.json');
    if (existsSync(file)) return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
    if (path.dirname(dir) === dir) return 'missing';
  }
}
