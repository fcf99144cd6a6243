import type { ExportConfig } from '../config/schema.js';
import { EXPORT_DEFAULTS, type LiveApiBenchLayout, type LiveApiBenchPandas } from '../config/schema.js';
import type { Formulation } from '../core/model.js';
import type { SplitShares } from './splits.js';

/** What an export's output depends on besides its inputs: its formats, splits, negatives and the rest. */

export type SplitMode = 'by-database' | 'by-question' | 'none';
export type FormatName = (typeof EXPORT_DEFAULTS.formats)[number];

export interface ExportSettings {
  formats: FormatName[];
  /** Default: every formulation each source has. */
  formulations?: Formulation[];
  split: SplitMode;
  shares: SplitShares;
  seed: number;
  negatives: number;
  restTools: number;
  rows: number;
  encoding: 'o200k_base' | 'cl100k_base';
  nearDuplicate: number;
  /** Examples over this many tokens (in any training format written) are reported, per format and formulation. */
  maxTokens?: number;
  /** With maxTokens: those examples are left out of every format (and listed). */
  dropOver: boolean;
  /** How Live API-Bench's SLOT/SEL files are laid out (REST's are the same in every layout); default `records`. */
  liveApiBenchLayout?: LiveApiBenchLayout;
  /** The pandas Live API-Bench's runtime runs on: the order of a join's rows (default `2.2`). */
  liveApiBenchPandas?: LiveApiBenchPandas;
}

export function exportSettings(config: ExportConfig | undefined, flags: Partial<ExportSettings>): ExportSettings {
  const pick = <K extends keyof ExportSettings>(key: K, fallback: ExportSettings[K]): ExportSettings[K] =>
    flags[key] ?? (config?.[key as keyof ExportConfig] as ExportSettings[K] | undefined) ?? fallback;
  const maxTokens = flags.maxTokens ?? config?.maxTokens;
  return {
    formats: pick('formats', [...EXPORT_DEFAULTS.formats]),
    ...(flags.formulations ? { formulations: flags.formulations } : {}),
    split: pick('split', EXPORT_DEFAULTS.split),
    shares: pick('shares', { ...EXPORT_DEFAULTS.shares }),
    seed: pick('seed', EXPORT_DEFAULTS.seed),
    negatives: pick('negatives', EXPORT_DEFAULTS.negatives),
    restTools: pick('restTools', EXPORT_DEFAULTS.restTools),
    rows: pick('rows', EXPORT_DEFAULTS.rows),
    encoding: pick('encoding', EXPORT_DEFAULTS.encoding),
    nearDuplicate: pick('nearDuplicate', EXPORT_DEFAULTS.nearDuplicate),
    ...(maxTokens !== undefined ? { maxTokens } : {}),
    dropOver: pick('dropOver', EXPORT_DEFAULTS.dropOver),
    liveApiBenchLayout: pick('liveApiBenchLayout', EXPORT_DEFAULTS.liveApiBenchLayout),
    liveApiBenchPandas: pick('liveApiBenchPandas', EXPORT_DEFAULTS.liveApiBenchPandas),
  };
}
