import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseConfig } from '../config/load.js';
import { EXPORT_DEFAULTS } from '../config/schema.js';
import { runExport, type ExportSummary } from '../export/run.js';
import { exportSettings } from '../export/settings.js';
import { vakraReplay, type ReplayFigures } from './vakra-replay.js';

/**
 * `nl2api export` on a generated BIRD dev output (SLOT and SEL from one folder, REST from
 * another: a two-source mixture), every format: the cold export's wall time (against the gold
 * SQL baseline measured in the same bench run), a rerun on the unchanged output (target: it
 * writes nothing), the size of each format's files, token totals, the lines each format left
 * out or refused, and the leakage report of the default split. The bar is a whole export in
 * under 10 s on the bench machine. Then its VAKRA ground truth replayed through `nl2api mcp
 * --protocol vakra` as VAKRA's runner and evaluator would run it (vakra-replay.ts), every split.
 */

export const EXPORT_TARGET_MS = 10_000;

export interface ExportFigures {
  coldMs: number;
  rerunMs: number;
  rerunWritten: number;
  files: number;
  mbPerFormat: Record<string, number>;
  counts: ExportSummary['counts'];
  tokens: Record<string, Record<string, { total: number; mean: number; p95: number; max: number; toolShare: number }>>;
  leakage: { sharedDatabases: number; nearDuplicatePairs: number; identicalSqlPairs: number };
  byQuestion: { sharedDatabases: number; nearDuplicatePairs: number; identicalQuestionPairs: number };
  /** Per formulation, the VAKRA ground truth's records whose replay gave their answer. */
  vakraReplay: Omit<ReplayFigures, 'problems'>[];
}

export async function exportBench(sequenceOutput: string, restOutput: string, birdDir: string): Promise<ExportFigures> {
  const work = mkdtempSync(path.join(os.tmpdir(), 'nl2api-export-bench-'));
  try {
    const options = (out: string, split: 'by-database' | 'by-question') => ({
      ...exportSettings(undefined, { split }),
      from: [
        { dir: sequenceOutput, databases: birdDir, weight: 1 },
        { dir: restOutput, databases: birdDir, weight: 1 },
      ],
      out: path.join(work, out),
      config: parseConfig({ source: birdDir, progress: 'none' }),
    });
    const started = performance.now();
    const cold = await runExport(options('all', 'by-database'));
    const coldMs = performance.now() - started;
    const again = performance.now();
    const rerun = await runExport(options('all', 'by-database'));
    const rerunMs = performance.now() - again;
    const byQuestion = await runExport({ ...options('by-question', 'by-question'), formats: ['nl2api'] });
    const mbPerFormat = Object.fromEntries(
      [...EXPORT_DEFAULTS.formats].map((format) => [
        format,
        Math.round(folderBytes(path.join(work, 'all', format)) / 1e5) / 10,
      ]),
    );
    const { summary } = cold;
    const vakra = path.join(work, 'all', 'vakra');
    const replays: ReplayFigures[] = [];
    for (const split of readdirSync(vakra).sort())
      replays.push(...(await vakraReplay(path.join(vakra, split), sequenceOutput, birdDir)));
    return {
      coldMs: Math.round(coldMs),
      rerunMs: Math.round(rerunMs),
      rerunWritten: rerun.written,
      files: Object.keys(summary.files).length,
      mbPerFormat,
      counts: summary.counts,
      tokens: Object.fromEntries(
        Object.entries(summary.tokens).map(([format, perFormulation]) => [
          format,
          Object.fromEntries(
            Object.entries(perFormulation).map(([f, s]) => [
              f,
              { total: s.total, mean: Math.round(s.mean), p95: s.p95, max: s.max, toolShare: s.toolShare },
            ]),
          ),
        ]),
      ),
      leakage: {
        sharedDatabases: summary.leakage.sharedDatabases.length,
        nearDuplicatePairs: summary.leakage.nearDuplicateQuestions.pairs,
        identicalSqlPairs: summary.leakage.identicalSql.pairs,
      },
      byQuestion: {
        sharedDatabases: byQuestion.summary.leakage.sharedDatabases.length,
        nearDuplicatePairs: byQuestion.summary.leakage.nearDuplicateQuestions.pairs,
        identicalQuestionPairs: byQuestion.summary.leakage.identicalQuestions.pairs,
      },
      vakraReplay: ['slot', 'sel'].map((formulation) => sumReplays(formulation, replays)),
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function sumReplays(formulation: string, replays: readonly ReplayFigures[]): Omit<ReplayFigures, 'problems'> {
  const mine = replays.filter((r) => r.formulation === formulation);
  const sum = (field: 'records' | 'equal' | 'calls' | 'seconds') => mine.reduce((n, r) => n + r[field], 0);
  return { formulation, records: sum('records'), equal: sum('equal'), calls: sum('calls'), seconds: sum('seconds') };
}

function folderBytes(dir: string): number {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((file) => statSync(path.join(dir, file)))
    .filter((s) => s.isFile())
    .reduce((sum, s) => sum + s.size, 0);
}

/** The benchmark's printed lines for the export. */
export function exportLines(figures: ExportFigures, baselineMs: number): string[] {
  const { counts } = figures;
  const ok = figures.coldMs < EXPORT_TARGET_MS ? 'ok' : 'MISSED';
  return [
    `export, every format, SLOT+SEL+REST of BIRD dev (${counts.loaded} samples, ${counts.negatives} negatives, ${figures.files} files): ${(figures.coldMs / 1000).toFixed(1)} s = ${(figures.coldMs / baselineMs).toFixed(1)}x the gold-SQL baseline (target < ${EXPORT_TARGET_MS / 1000} s: ${ok}); rerun on the unchanged output ${figures.rerunMs} ms, ${figures.rerunWritten} files written (target 0)`,
    `  lines: ${counts.invalid} refused by their format's schema, ${counts.unsupported} left out of a format with no form for them, ${counts.failed} samples whose gold calls failed`,
    `  MB per format: ${Object.entries(figures.mbPerFormat)
      .map(([f, mb]) => `${f} ${mb}`)
      .join(', ')}`,
    ...Object.entries(figures.tokens).map(
      ([format, perFormulation]) =>
        `  tokens ${format}: ${Object.entries(perFormulation)
          .map(
            ([f, s]) =>
              `${f} ${(s.total / 1e6).toFixed(1)}M (mean ${s.mean}, p95 ${s.p95}, max ${s.max}, tools ${(s.toolShare * 100).toFixed(0)}%)`,
          )
          .join(', ')}`,
    ),
    `  VAKRA ground truth replayed through nl2api mcp --protocol vakra: ${figures.vakraReplay
      .map((r) => `${r.formulation} ${r.equal}/${r.records} (${r.calls} calls, ${r.seconds.toFixed(1)} s)`)
      .join(', ')}`,
    `  leakage by-database: ${figures.leakage.sharedDatabases} shared databases, ${figures.leakage.nearDuplicatePairs} near-duplicate question pairs, ${figures.leakage.identicalSqlPairs} identical SQL pairs; by-question: ${figures.byQuestion.sharedDatabases} shared databases, ${figures.byQuestion.nearDuplicatePairs} near-duplicate and ${figures.byQuestion.identicalQuestionPairs} identical question pairs across splits`,
  ];
}
