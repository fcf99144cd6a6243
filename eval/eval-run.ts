import type { UsageSnapshot } from '../generators/llm/usage.js';
import type { EvalModel } from './models/model.js';
import { writeReport } from './report/write.js';
import type { EvalSession, EvalSettings } from './session.js';
import { summarize, type EvalSummary, type ResultLine } from './summary.js';

/** What `nl2api eval` is given and what it gives back, whichever scheduler ran the attempts (run.ts, queue-run.ts). */

export interface EvalOptions extends EvalSettings {
  report: string;
  /** Where results and replies are cached (default `<report>/.cache`; a queue run keeps them in Redis). */
  cacheDir?: string;
  signal?: AbortSignal;
  onProgress?: (done: number, total: number) => void;
  /** Tests: models beyond the registry's (in process only). */
  extraModels?: Record<string, EvalModel>;
  log?: (line: string) => void;
}

export interface EvalRun {
  summary: EvalSummary;
  lines: ResultLine[];
  files: string[];
  usage: UsageSnapshot;
  aborted: boolean;
}

/** The lines of every attempt (undefined: not run, the run was interrupted) into the summary and, when complete, the report. */
export async function finish(
  session: EvalSession,
  lines: readonly (ResultLine | undefined)[],
  report: string,
): Promise<EvalRun> {
  const aborted = lines.some((l) => l === undefined);
  const complete = lines.filter((l): l is ResultLine => l !== undefined);
  const summary = summarize(complete, session.header);
  const files = aborted ? [] : await writeReport(report, complete, summary);
  return { summary, lines: complete, files, usage: session.usage.snapshot(), aborted };
}
