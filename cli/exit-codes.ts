import type { RunStats } from '../pipeline/stats.js';

/** The CLI's exit codes (README, "Exit codes"). */
export const EXIT_OK = 0;
/** The command could not run: a bad option, config or source, an unwritable folder, a port in use. */
export const EXIT_ERROR = 1;
/** The run finished without a single sample in any formulation. */
export const EXIT_NOTHING_PRODUCED = 2;
/** `--strict`: the run finished, but some input records were bad (ingest `bad_input`). */
export const EXIT_BAD_INPUT = 3;
export const EXIT_INTERRUPTED = 130;

/** A finished run's exit code and, unless it is 0, the line that says why. */
export function runVerdict(stats: RunStats, strict: boolean): { code: number; reason?: string } {
  const formulations = Object.values(stats.formulations);
  if (formulations.every((f) => f.total.accepted === 0)) {
    return {
      code: EXIT_NOTHING_PRODUCED,
      reason: 'no sample was produced: every question was rejected (see the warnings above and rejections.jsonl)',
    };
  }
  // Ingest rejections count in every formulation: the largest count is the number of bad records.
  const badInput = Math.max(...formulations.map((f) => f.stages.ingest?.rejected ?? 0));
  if (strict && badInput > 0) {
    return {
      code: EXIT_BAD_INPUT,
      reason: `--strict: ${badInput} input record${badInput === 1 ? ' was' : 's were'} bad (ingest bad_input in rejections.jsonl)`,
    };
  }
  return { code: EXIT_OK };
}
