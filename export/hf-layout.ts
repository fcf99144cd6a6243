import type { Formulation } from '../core/model.js';
import { sizeCategory, yamlScalar } from '../pipeline/dataset-card.js';
import type { SplitName } from './splits.js';

/**
 * The Hugging Face dataset layout of an export: `data/<formulation>/<split>-NNNNN-of-MMMMM.parquet`
 * (the Hub's shard naming, which `datasets.load_dataset` and the dataset viewer read), and a
 * card whose YAML declares one config per formulation, each with its splits. The card's body
 * is the generated output's own card, followed by what the export added: its sources, splits,
 * formats and leakage check.
 */

/** Rows per Parquet shard: a few MB each, as the Hub's viewer likes them. */
export const SHARD_ROWS = 20_000;

export function shardFiles(formulation: Formulation, split: SplitName, rows: number): string[] {
  const shards = Math.max(1, Math.ceil(rows / SHARD_ROWS));
  const pad = (n: number) => String(n).padStart(5, '0');
  return Array.from({ length: shards }, (_, i) => `data/${formulation}/${split}-${pad(i)}-of-${pad(shards)}.parquet`);
}

export interface CardInput {
  /** The first source's card (README.md of its output folder), if it has one. */
  sourceCard: string | null;
  /** Used when there is no source card. */
  prettyName: string;
  /** Rows per formulation and split. */
  counts: Partial<Record<Formulation, Partial<Record<SplitName, number>>>>;
  /** The card section the export writes (sources, splits, formats, leakage). */
  exportSection: string;
}

/** Front-matter blocks the export states anew: the files and splits, and the size. */
const RESTATED = ['configs', 'size_categories'];

export function hfCard(input: CardInput): string {
  const card = input.sourceCard ?? '';
  const match = /^---\n([\s\S]*?)\n---\n/.exec(card);
  const kept = match
    ? withoutBlocks(match[1].split('\n'), RESTATED)
    : ['license: other', `pretty_name: ${yamlScalar(input.prettyName)}`];
  const body = match ? card.slice(match[0].length) : `# ${input.prettyName}\n`;
  const formulations = Object.keys(input.counts) as Formulation[];
  const total = formulations.reduce(
    (sum, f) => sum + Object.values(input.counts[f] ?? {}).reduce((a, b) => a + (b ?? 0), 0),
    0,
  );
  const front = [
    '---',
    ...kept,
    'size_categories:',
    `- ${yamlScalar(sizeCategory(total))}`,
    'configs:',
    ...formulations.flatMap((f, i) => [
      `- config_name: ${f}`,
      ...(i === 0 ? ['  default: true'] : []),
      '  data_files:',
      ...Object.keys(input.counts[f] ?? {}).flatMap((split) => [
        `  - split: ${split}`,
        `    path: "data/${f}/${split}-*.parquet"`,
      ]),
    ]),
    '---',
  ];
  return [...front, '', body.trim(), '', input.exportSection, ''].join('\n');
}

/** YAML lines without the named top-level keys (each with its indented or listed lines). */
function withoutBlocks(lines: readonly string[], keys: readonly string[]): string[] {
  const kept: string[] = [];
  let skipping = false;
  for (const line of lines) {
    if (!/^[\s-]/.test(line)) skipping = keys.some((key) => line.startsWith(`${key}:`));
    if (!skipping) kept.push(line);
  }
  return kept;
}
