import type { ToolSpec } from '../core/model.js';
import type { EvalItem } from '../eval/dataset.js';
import type { CorpusSource } from './corpus.js';
import type { PandasReading } from './published/pandas-reading.js';
import type { SplitName } from './splits.js';

/**
 * One example of an export, whatever its format: a generated sample (or a weighted copy of
 * it, or its negative variant), the split it fell in, the tools it offers and the real
 * outputs of its gold calls. Every format is a function of this.
 */
export interface ExportSample {
  /** `<source>/<formulation>/<db>/<sample id>`, then `#<copy>` for a weighted copy and `!negative` for a negative. */
  key: string;
  unit: string;
  source: CorpusSource;
  item: EvalItem;
  copy: number;
  split: SplitName;
  /** Its tools cannot answer it: the expected output is no call and a refusal. */
  negative: boolean;
  /** The tools offered (a negative's lack every tool that answers it). */
  tools: ToolSpec[];
  /** Each gold call's output as a model sees it (none for a negative). */
  outputs: unknown[];
  /** SLOT/SEL: the keys of its starting tables (gold-run.ts); its tools offer these and the keys its calls use. */
  startKeys: readonly string[];
  /** SLOT/SEL, when the Live API-Bench format is written: what its runtime's pandas makes of the sample's data. */
  pandas?: PandasReading;
}

/** Where a sample came from: the line beside it in the provenance file, and the fields of the record formats. */
export function provenanceOf(sample: ExportSample) {
  return {
    key: sample.key,
    source: sample.source.name,
    dataset: sample.source.dataset,
    formulation: sample.item.formulation,
    db: sample.item.db,
    sample_id: sample.item.id,
    copy: sample.copy,
    negative: sample.negative,
  };
}
