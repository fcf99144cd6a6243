import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { jsonlText, jsonText, writeFileAtomic } from '../../pipeline/files.js';
import { DatasetError } from '../dataset.js';
import type { EvalSummary, ResultLine } from '../summary.js';
import { renderReportPage, type ReportRun } from './html.js';

/**
 * An evaluation's files: `results.jsonl` (one line per attempt, in model, item and repeat
 * order), `summary.json` and `index.html` (the report page). `nl2api report` reads runs back
 * and puts several on one page.
 */

export const RESULTS_FILE = 'results.jsonl';
export const SUMMARY_FILE = 'summary.json';
export const PAGE_FILE = 'index.html';

export async function writeReport(dir: string, lines: readonly ResultLine[], summary: EvalSummary): Promise<string[]> {
  const files = [path.join(dir, RESULTS_FILE), path.join(dir, SUMMARY_FILE), path.join(dir, PAGE_FILE)];
  // The page first: its drill-down is compressed off the main thread while results.jsonl is
  // written out here (the two are most of a run's last second).
  const page = renderReportPage([{ name: path.basename(dir), summary, lines }]);
  page.catch(() => undefined); // awaited below; a write failing first must not leave it unhandled
  await writeFileAtomic(files[0], jsonlText(lines));
  await writeFileAtomic(files[1], jsonText(summary));
  await writeFileAtomic(files[2], await page);
  return files;
}

/** A finished run's summary and results, as `writeReport` left them. */
export async function readRun(dir: string): Promise<ReportRun> {
  const read = (file: string) =>
    readFile(path.join(dir, file), 'utf8').catch(() => {
      throw new DatasetError(`${dir} is not an evaluation report: no ${file}`);
    });
  const summary = JSON.parse(await read(SUMMARY_FILE)) as EvalSummary;
  const lines = (await read(RESULTS_FILE))
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as ResultLine);
  return { name: path.basename(path.resolve(dir)), summary, lines };
}

/** `nl2api report <dir>… --out <dir>`: several runs on one page. */
export async function mergeReports(dirs: readonly string[], out: string): Promise<string> {
  const names = runNames(dirs);
  const runs = (await Promise.all(dirs.map(readRun))).map((run, i) => ({ ...run, name: names[i] }));
  const file = path.join(out, PAGE_FILE);
  await writeFileAtomic(file, await renderReportPage(runs));
  return file;
}

/**
 * The runs' folder names, with as many parent folders as it takes to tell them apart
 * (`a/report` and `b/report`): the page names a run by its folder where run names coincide.
 */
export function runNames(dirs: readonly string[]): string[] {
  const parts = dirs.map((dir) =>
    path
      .resolve(dir)
      .split(path.sep)
      .filter((part) => part !== ''),
  );
  const depths = parts.map(() => 1);
  const name = (i: number) => parts[i].slice(-depths[i]).join('/');
  for (;;) {
    const clashing = parts
      .map((_, i) => i)
      .filter((i) => depths[i] < parts[i].length && parts.some((_, j) => j !== i && name(j) === name(i)));
    if (clashing.length === 0) return parts.map((_, i) => name(i));
    for (const i of clashing) depths[i]++;
  }
}
