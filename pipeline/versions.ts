import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { EmittedFile } from './emit-artifact.js';
import { jsonText, writeFileAtomic } from './files.js';
import { sha256 } from '../core/hash.js';

/**
 * Versioned outputs for scheduled regeneration. Under a base directory:
 *
 *   base/versions/<version>/   one complete run output (what generate writes into its out dir),
 *                              plus the diff.json publishVersion adds
 *   base/latest.json           { version, path: "versions/<version>", publishedAt } of the
 *                              newest published version
 *
 * A run writes into a new version directory, diffs it against the latest published version
 * (diffOutputs), then publishes it (publishVersion): diff.json first, latest.json last and
 * atomically, so a reader following latest.json only ever sees complete outputs.
 *
 *   const previous = await latestVersion(base);
 *   const dir = versionDir(base, version);
 *   // ... generate into dir ...
 *   await publishVersion(base, version, await diffOutputs(previous?.dir ?? null, dir));
 */

export const LATEST_FILE = 'latest.json';
export const VERSIONS_DIR = 'versions';
export const DIFF_FILE = 'diff.json';
const MANIFEST_FILE = 'manifest.json';

export interface LatestPointer {
  version: string;
  /** `versions/<version>`, relative to the base directory, `/`-separated. */
  path: string;
  publishedAt: string;
}

export interface FormulationDiff {
  added: number;
  removed: number;
  changed: number;
  unchanged: number;
  /** `<db>/<sample_id>`, sorted by database, then sample id (numerically when both ids are digits). */
  addedIds: string[];
  removedIds: string[];
  changedIds: string[];
}

export interface OutputDiff {
  /**
   * The compared output directories. diffOutputs records them as given; publishVersion stores
   * them relative to the base directory (`versions/<version>`) when they lie inside it.
   */
  previous: string | null;
  current: string;
  /** Per formulation found in either manifest (`<formulation>/<db>.jsonl` files), in name order. */
  formulations: Record<string, FormulationDiff>;
  totals: { added: number; removed: number; changed: number; unchanged: number };
  /** What the models the config names to evaluate scored on this version, beside the previous version's scores. */
  evaluation?: unknown;
}

const VERSION_PATTERN = /^[A-Za-z0-9._-]+$/;
const MAX_VERSION_LENGTH = 200;

/**
 * Version names become directory names: letters, digits, `.`, `_`, `-`; not starting with `.`
 * (no `.`/`..`, no hidden directories) and without `..` anywhere.
 */
export function assertVersionName(version: string): void {
  if (
    typeof version !== 'string' ||
    !VERSION_PATTERN.test(version) ||
    version.startsWith('.') ||
    version.includes('..') ||
    version.length > MAX_VERSION_LENGTH
  ) {
    throw new Error(
      `invalid version name ${JSON.stringify(version)}: use 1-${MAX_VERSION_LENGTH} of [A-Za-z0-9._-], not starting with '.' and without '..' (e.g. 2026-11-21T02-00-00Z)`,
    );
  }
}

function isVersionName(version: unknown): version is string {
  try {
    assertVersionName(version as string);
    return true;
  } catch {
    return false;
  }
}

export function versionDir(base: string, version: string): string {
  assertVersionName(version);
  return path.join(base, VERSIONS_DIR, version);
}

function pointerPath(version: string): string {
  return `${VERSIONS_DIR}/${version}`;
}

/**
 * The latest published version and its directory (`versionDir(base, version)`), or null when
 * there is none: no latest.json, one that is not a valid pointer, or one naming a version whose
 * directory (or its manifest.json) is gone. Other read errors (permissions) are thrown.
 */
export async function latestVersion(base: string): Promise<{ version: string; dir: string } | null> {
  let text: string;
  try {
    text = await readFile(path.join(base, LATEST_FILE), 'utf8');
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
  let pointer: unknown;
  try {
    pointer = JSON.parse(text);
  } catch {
    return null;
  }
  if (pointer === null || typeof pointer !== 'object') return null;
  const { version, path: relative } = pointer as Partial<LatestPointer>;
  if (!isVersionName(version) || relative !== pointerPath(version)) return null;
  const dir = versionDir(base, version);
  if (!(await isFile(path.join(dir, MANIFEST_FILE)))) return null;
  return { version, dir };
}

/** The version directories under base (valid names only), sorted by name (code unit order). */
export async function listVersions(base: string): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(path.join(base, VERSIONS_DIR), { withFileTypes: true });
  } catch (error) {
    if (isNotFound(error)) return [];
    throw error;
  }
  return entries
    .filter((e) => e.isDirectory() && isVersionName(e.name))
    .map((e) => e.name)
    .sort(compareCodeUnits);
}

/**
 * Publishes a complete version: writes `<versionDir>/diff.json`, then atomically replaces
 * latest.json. Call it only once the version's output is complete; it refuses a version
 * without manifest.json (generate writes that last) and a diff that is not of this version.
 */
export async function publishVersion(
  base: string,
  version: string,
  diff: OutputDiff,
  options: { now?: Date } = {},
): Promise<void> {
  const dir = versionDir(base, version);
  if (!(await isFile(path.join(dir, MANIFEST_FILE)))) {
    throw new Error(
      `cannot publish version ${version}: ${path.join(dir, MANIFEST_FILE)} is missing (the run did not complete)`,
    );
  }
  if (path.resolve(diff.current) !== path.resolve(dir)) {
    throw new Error(`cannot publish version ${version}: the diff is of ${diff.current}, not of ${dir}`);
  }
  const stored: OutputDiff = {
    ...diff,
    previous: diff.previous === null ? null : relativeToBase(base, diff.previous),
    current: relativeToBase(base, diff.current),
  };
  await writeFileAtomic(path.join(dir, DIFF_FILE), jsonText(stored));
  const pointer: LatestPointer = {
    version,
    path: pointerPath(version),
    publishedAt: (options.now ?? new Date()).toISOString(),
  };
  await writeFileAtomic(path.join(base, LATEST_FILE), jsonText(pointer));
}

/** `dir` relative to base (`/`-separated) when it lies inside base, else as given. */
function relativeToBase(base: string, dir: string): string {
  const relative = path.relative(path.resolve(base), path.resolve(dir));
  if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative)) return dir;
  return relative.split(path.sep).join('/');
}

/** `<formulation>/<db>.jsonl`: the sample files (not tools/, openapi/, rest/endpoints/, rejections.jsonl). */
const SAMPLE_FILE = /^([^/\\]+)\/([^/\\]+)\.jsonl$/;

interface SampleFile {
  formulation: string;
  db: string;
  file: EmittedFile;
}

/**
 * The samples of `currentDir` against those of `previousDir` (null: everything is added), per
 * formulation, keyed by (formulation, db, sample_id); a sample is changed when its JSONL line
 * differs byte for byte. Reads the files each directory's manifest.json lists; a sample file
 * whose manifest sha256 equals the previous one's counts as unchanged without being parsed
 * (only its lines are counted). Every file read must match its manifest entry.
 */
export async function diffOutputs(previousDir: string | null, currentDir: string): Promise<OutputDiff> {
  const current = await sampleFiles(currentDir);
  const previous = previousDir === null ? new Map<string, SampleFile>() : await sampleFiles(previousDir);
  const formulations = [...new Set([...current.values(), ...previous.values()].map((f) => f.formulation))].sort(
    compareCodeUnits,
  );

  const result: Record<string, FormulationDiff> = {};
  for (const formulation of formulations) {
    const added: SampleRef[] = [];
    const removed: SampleRef[] = [];
    const changed: SampleRef[] = [];
    let unchanged = 0;
    const keys = [
      ...new Set(
        [...current.keys(), ...previous.keys()].filter(
          (k) => (current.get(k) ?? previous.get(k))!.formulation === formulation,
        ),
      ),
    ];
    for (const key of keys) {
      const now = current.get(key);
      const before = previous.get(key);
      if (now && before && now.file.sha256 === before.file.sha256) {
        unchanged += lineCount(await verifiedContent(currentDir, now.file));
        continue;
      }
      const db = (now ?? before)!.db;
      const nowLines = now
        ? linesById(await verifiedContent(currentDir, now.file), path.join(currentDir, now.file.path))
        : new Map<string, string>();
      const beforeLines = before
        ? linesById(await verifiedContent(previousDir!, before.file), path.join(previousDir!, before.file.path))
        : new Map<string, string>();
      for (const [id, line] of nowLines) {
        const old = beforeLines.get(id);
        if (old === undefined) added.push({ db, id });
        else if (old === line) unchanged++;
        else changed.push({ db, id });
      }
      for (const id of beforeLines.keys()) if (!nowLines.has(id)) removed.push({ db, id });
    }
    result[formulation] = {
      added: added.length,
      removed: removed.length,
      changed: changed.length,
      unchanged,
      addedIds: sortedIds(added),
      removedIds: sortedIds(removed),
      changedIds: sortedIds(changed),
    };
  }
  const totals = { added: 0, removed: 0, changed: 0, unchanged: 0 };
  for (const f of Object.values(result)) {
    totals.added += f.added;
    totals.removed += f.removed;
    totals.changed += f.changed;
    totals.unchanged += f.unchanged;
  }
  return { previous: previousDir, current: currentDir, formulations: result, totals };
}

/** The sample files a run output's manifest lists, by `<formulation>/<db>`. */
async function sampleFiles(dir: string): Promise<Map<string, SampleFile>> {
  const manifestPath = path.join(dir, MANIFEST_FILE);
  let manifest: unknown;
  try {
    manifest = JSON.parse(await readFile(manifestPath, 'utf8'));
  } catch (error) {
    if (isNotFound(error)) throw new Error(`${manifestPath} is missing: not a complete run output`, { cause: error });
    throw new Error(`${manifestPath} cannot be read: ${(error as Error).message}`, { cause: error });
  }
  const files = (manifest as { files?: unknown } | null)?.files;
  if (!Array.isArray(files)) throw new Error(`${manifestPath} has no files list`);
  const byKey = new Map<string, SampleFile>();
  for (const entry of files as unknown[]) {
    const file = entry as Partial<EmittedFile> | null;
    if (!file || typeof file.path !== 'string' || typeof file.sha256 !== 'string' || typeof file.bytes !== 'number') {
      throw new Error(`${manifestPath}: malformed files entry ${JSON.stringify(entry)}`);
    }
    const match = SAMPLE_FILE.exec(file.path);
    if (!match) continue;
    const [, formulation, db] = match;
    if (formulation === '.' || formulation === '..' || db === '.' || db === '..' || db === '') {
      throw new Error(`${manifestPath}: unexpected sample file path ${file.path}`);
    }
    const key = `${formulation}/${db}`;
    if (byKey.has(key)) throw new Error(`${manifestPath} lists ${file.path} twice`);
    byKey.set(key, { formulation, db, file: file as EmittedFile });
  }
  return byKey;
}

/** The file's content, checked against its manifest entry (size and sha256). */
async function verifiedContent(dir: string, file: EmittedFile): Promise<Buffer> {
  const full = path.join(dir, ...file.path.split('/'));
  let content: Buffer;
  try {
    content = await readFile(full);
  } catch (error) {
    if (isNotFound(error)) throw new Error(`${full} is listed in the manifest but missing`, { cause: error });
    throw error;
  }
  if (content.length !== file.bytes || sha256(content) !== file.sha256) {
    throw new Error(`${full} does not match its manifest entry (size or sha256 differ)`);
  }
  return content;
}

/** The JSONL lines (each `\n`-terminated, the last one possibly not). */
function lines(content: Buffer): string[] {
  const text = content.toString('utf8');
  if (text === '') return [];
  const all = text.split('\n');
  if (all[all.length - 1] === '') all.pop();
  return all;
}

function lineCount(content: Buffer): number {
  if (content.length === 0) return 0;
  let count = 0;
  for (let i = content.indexOf(10); i !== -1; i = content.indexOf(10, i + 1)) count++;
  return content[content.length - 1] === 10 ? count : count + 1;
}

/** Each line by its sample_id (as a string); a line without one, or a repeated id, is an error. */
function linesById(content: Buffer, file: string): Map<string, string> {
  const byId = new Map<string, string>();
  lines(content).forEach((line, index) => {
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch {
      throw new Error(`${file}:${index + 1}: not a JSON line`);
    }
    const id = (record as { sample_id?: unknown } | null)?.sample_id;
    if (typeof id !== 'string' && typeof id !== 'number') throw new Error(`${file}:${index + 1}: no sample_id`);
    const key = String(id);
    if (byId.has(key)) throw new Error(`${file}:${index + 1}: sample_id ${key} appears twice`);
    byId.set(key, line);
  });
  return byId;
}

interface SampleRef {
  db: string;
  id: string;
}

function sortedIds(refs: SampleRef[]): string[] {
  return [...refs]
    .sort((a, b) => compareCodeUnits(a.db, b.db) || compareSampleIds(a.id, b.id))
    .map((r) => `${r.db}/${r.id}`);
}

/** Digit-only ids numerically ("2" before "10"), else by code units; deterministic whatever the locale. */
function compareSampleIds(a: string, b: string): number {
  const digits = /^\d+$/;
  if (digits.test(a) && digits.test(b)) {
    const x = a.replace(/^0+(?=\d)/, '');
    const y = b.replace(/^0+(?=\d)/, '');
    return x.length - y.length || compareCodeUnits(x, y) || compareCodeUnits(a, b);
  }
  return compareCodeUnits(a, b);
}

function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

async function isFile(file: string): Promise<boolean> {
  try {
    return (await stat(file)).isFile();
  } catch (error) {
    if (isNotFound(error) || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return false;
    throw error;
  }
}

function isNotFound(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | null)?.code === 'ENOENT';
}
