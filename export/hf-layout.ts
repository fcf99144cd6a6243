import type { Formulation } from '../core/model.js';
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
  license: string;
  prettyName: string;
  /** Rows per formulation and split. */
  counts: Partial<Record<Formulation, Partial<Record<SplitName, number>>>>;
  /** The card section the export writes (sources, splits, formats, leakage). */
  exportSection: string;
}

export function hfCard(input: CardInput): string {
  const formulations = Object.keys(input.counts) as Formulation[];
  const total = formulations.reduce(
    (sum, f) => sum + Object.values(input.counts[f] ?? {}).reduce((a, b) => a + (b ?? 0), 0),
    0,
  );
  const yaml = [
    '---',
    `license: ${input.license}`,
    `pretty_name: ${JSON.stringify(input.prettyName)}`,
    'language:',
    '- en',
    'task_categories:',
    '- text-generation',
    '- table-question-answering',
    'tags:',
    ...['tool-calling', 'function-calling', 'text-to-sql', 'nl2api', ...formulations].map((t) => `- ${t}`),
    'size_categories:',
    `- ${JSON.stringify(sizeCategory(total))}`,
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
  return [
    ...yaml,
    '',
    withoutFrontMatter(input.sourceCard ?? `# ${input.prettyName}\n`).trim(),
    '',
    input.exportSection,
    '',
  ].join('\n');
}

function withoutFrontMatter(card: string): string {
  return card.replace(/^---\n[\s\S]*?\n---\n/, '');
}

function sizeCategory(n: number): string {
  if (n < 1_000) return 'n<1K';
  if (n < 10_000) return '1K<n<10K';
  if (n < 100_000) return '10K<n<100K';
  if (n < 1_000_000) return '100K<n<1M';
  return '1M<n<10M';
}
