import { getEncoding, type Tiktoken, type TiktokenEncoding } from 'js-tiktoken';

/**
 * Token statistics of an export's lines (issue 13), so that a user can budget a training run:
 * per format and formulation, the lines' token counts under a tokenizer that ships its
 * vocabulary with the package (js-tiktoken: `o200k_base` by default, GPT-4o's; `cl100k_base`,
 * GPT-4's). Counts are of the line's text as written, which is what a trainer reads; a chat
 * template adds a few tokens per message on top.
 */

export interface TokenStats {
  encoding: TiktokenEncoding;
  lines: number;
  total: number;
  mean: number;
  p50: number;
  p95: number;
  max: number;
}

const encoders = new Map<TiktokenEncoding, Tiktoken>();

export function countTokens(text: string, encoding: TiktokenEncoding = 'o200k_base'): number {
  let encoder = encoders.get(encoding);
  if (!encoder) encoders.set(encoding, (encoder = getEncoding(encoding)));
  return encoder.encode(text).length;
}

export function tokenStats(lines: readonly string[], encoding: TiktokenEncoding = 'o200k_base'): TokenStats {
  const counts = lines.map((line) => countTokens(line, encoding)).sort((a, b) => a - b);
  const total = counts.reduce((a, b) => a + b, 0);
  // Nearest rank: the smallest count with at least q of the lines at or below it.
  const quantile = (q: number) => (counts.length ? counts[Math.max(0, Math.ceil(q * counts.length) - 1)] : 0);
  return {
    encoding,
    lines: counts.length,
    total,
    mean: counts.length ? total / counts.length : 0,
    p50: quantile(0.5),
    p95: quantile(0.95),
    max: counts[counts.length - 1] ?? 0,
  };
}
