import { getEncoding, type Tiktoken, type TiktokenEncoding } from 'js-tiktoken';

/**
 * Token statistics of an export (issue 13), so that a user can budget a training run: per
 * format and formulation, each example's token count under a tokenizer that ships its
 * vocabulary with the package (js-tiktoken: `o200k_base` by default, GPT-4o's; `cl100k_base`,
 * GPT-4's). An example is counted as a model reads it after its chat template: the text of
 * each of its parts (each tool, each message) plus a fixed few tokens per part for the
 * template's markers, as OpenAI's own estimate does: an estimate within a few tokens per part
 * of any one template. A database's examples share their tools, so each distinct part is
 * encoded once.
 */

export interface TokenStats {
  encoding: TiktokenEncoding;
  examples: number;
  total: number;
  mean: number;
  p50: number;
  p95: number;
  max: number;
}

/** What a chat template adds around each part (role markers, separators). */
export const TOKENS_PER_PART = 3;

const encoders = new Map<TiktokenEncoding, Tiktoken>();

export function countTokens(text: string, encoding: TiktokenEncoding = 'o200k_base'): number {
  let encoder = encoders.get(encoding);
  if (!encoder) encoders.set(encoding, (encoder = getEncoding(encoding)));
  return encoder.encode(text).length;
}

/** Counts examples given as their parts' texts, each distinct text encoded once. */
export class TokenCounter {
  private readonly counts: number[] = [];
  private readonly memo = new Map<string, number>();

  constructor(readonly encoding: TiktokenEncoding = 'o200k_base') {}

  add(parts: readonly string[]): void {
    let total = 0;
    for (const part of parts) {
      let count = this.memo.get(part);
      if (count === undefined) this.memo.set(part, (count = countTokens(part, this.encoding)));
      total += count + TOKENS_PER_PART;
    }
    this.counts.push(total);
  }

  stats(): TokenStats {
    const counts = [...this.counts].sort((a, b) => a - b);
    const total = counts.reduce((a, b) => a + b, 0);
    // Nearest rank: the smallest count with at least q of the examples at or below it.
    const quantile = (q: number) => (counts.length ? counts[Math.max(0, Math.ceil(q * counts.length) - 1)] : 0);
    return {
      encoding: this.encoding,
      examples: counts.length,
      total,
      mean: counts.length ? total / counts.length : 0,
      p50: quantile(0.5),
      p95: quantile(0.95),
      max: counts[counts.length - 1] ?? 0,
    };
  }
}
