/** The formats `--predictions-format` reads (read.ts), and what a reader makes of a record: loaded by the CLI without the evaluation. */
export const PREDICTION_FORMATS = ['nl2api', 'vakra'] as const;
export type PredictionFormat = (typeof PREDICTION_FORMATS)[number];

/** One record read: the item's id and the agent's calls for it, or why it could not be read. */
export type RecordCalls = { id: string; calls: unknown[] } | { error: string };
