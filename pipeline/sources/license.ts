import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { folderEntries } from './entries.js';
import type { SourceLayoutName } from './layouts.js';

/**
 * The license a source states about itself, so that the dataset card can pass it on (a
 * share-alike license binds the generated dataset too). Read from a LICENSE/COPYING file or
 * a README beside the question file; a BIRD download states nothing itself, yet BIRD is
 * CC BY-SA 4.0, so a BIRD-layout source that is silent is taken to be BIRD — and the card
 * says that this was assumed, not read.
 */

export interface SourceLicense {
  /** A Hugging Face license id (`cc-by-sa-4.0`, `mit`, …), or `unknown`. */
  id: string;
  /** Where the id comes from: a file of the source folder, `bird-layout` (assumed), `config`, or `none`. */
  from: string;
  /** The source is BIRD or derived from it: the card attributes and cites BIRD. */
  bird: boolean;
}

/** Known licenses as sources write them; the earliest mention in a file wins. */
const LICENSES: readonly (readonly [string, RegExp])[] = [
  [
    'cc-by-nc-sa-4.0',
    /\bCC[\s-]?BY[\s-]?NC[\s-]?SA[\s-]?4\.0\b|Creative Commons Attribution[\s-]NonCommercial[\s-]ShareAlike 4\.0/i,
  ],
  ['cc-by-nc-4.0', /\bCC[\s-]?BY[\s-]?NC[\s-]?4\.0\b|Creative Commons Attribution[\s-]NonCommercial 4\.0/i],
  ['cc-by-sa-4.0', /\bCC[\s-]?BY[\s-]?SA[\s-]?4\.0\b|Creative Commons Attribution[\s-]ShareAlike 4\.0/i],
  ['cc-by-4.0', /\bCC[\s-]?BY[\s-]?4\.0\b|Creative Commons Attribution 4\.0/i],
  ['cc0-1.0', /\bCC0\b/i],
  ['apache-2.0', /\bApache License,? Version 2\.0\b|\bApache[\s-]2\.0\b/i],
  ['mit', /\bMIT License\b|\bLicen[cs]e(?:d under|:)\s*(?:the\s+)?MIT\b/i],
];

/** Text that names BIRD itself (a README that only borrows BIRD's file layout does not). */
const BIRD_MENTION = /bird-bench\.github\.io|\bBIRD-SQL\b/i;

const LICENSE_FILE = /^(LICEN[CS]E|COPYING)(\.(md|txt))?$/i;
const README_FILE = /^README(\.(md|txt))?$/i;

/** The first known license named in `text`, by position. */
export function licenseIn(text: string): string | undefined {
  let best: { id: string; at: number } | undefined;
  for (const [id, pattern] of LICENSES) {
    const at = text.search(pattern);
    if (at >= 0 && (!best || at < best.at)) best = { id, at };
  }
  return best?.id;
}

/** The license of the source whose question file lies in `root`. */
export async function detectLicense(root: string, layout: SourceLayoutName): Promise<SourceLicense> {
  const { files } = await folderEntries(root);
  // License files speak first: a README may mention other licenses in passing.
  const candidates = [...files.filter((f) => LICENSE_FILE.test(f)), ...files.filter((f) => README_FILE.test(f))];
  let bird = false;
  let found: SourceLicense | undefined;
  for (const file of candidates) {
    const text = await readFile(path.join(root, file), 'utf8').catch(() => '');
    bird ||= BIRD_MENTION.test(text);
    const id = licenseIn(text);
    if (id && !found) found = { id, from: file, bird: false };
  }
  if (found) return { ...found, bird };
  // A silent BIRD download, or a README about BIRD that names no license.
  if (layout === 'bird' && (candidates.length === 0 || bird))
    return { id: 'cc-by-sa-4.0', from: 'bird-layout', bird: true };
  return { id: 'unknown', from: 'none', bird };
}
