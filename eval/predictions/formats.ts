/** The formats `--predictions-format` reads (read.ts): loaded by the CLI without the evaluation. */
export const PREDICTION_FORMATS = ['nl2api', 'vakra'] as const;
export type PredictionFormat = (typeof PREDICTION_FORMATS)[number];
