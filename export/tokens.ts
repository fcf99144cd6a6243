import { countTokens as countCl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { countTokens as countO200k } from 'gpt-tokenizer/encoding/o200k_base';

/**
 * Token statistics of an export (issues 13, 32), so that a user can budget a training run: per
 * format, formulation and split, each example's token count under a tokenizer that ships its
 * vocabulary with the package (gpt-tokenizer, OpenAI's BPE in plain JS: `o200k_base` by
 * default, GPT-4o's; `cl100k_base`, GPT-4's). An example is counted as a model reads it
 * after its chat template: the text of each of its parts (the tool list, each message) plus a
 * fixed few tokens per part for the template's markers, as OpenAI's own estimate does: within
 * a few tokens per part of any one template. A part is given as its segments (one per tool, a
 * message's lines), counted separately: examples share tools, and formats share tool outputs,
 * so each distinct segment is counted once per export, exactly, as the sum of its pieces
 * (`piecesOf`), each distinct piece encoded once.
 */

export interface TokenStats {
  encoding: TokenEncoding;
  examples: number;
  total: number;
  mean: number;
  p50: number;
  p95: number;
  max: number;
  /** The share of the tokens taken by the tool specs (0 to 1). */
  toolShare: number;
}

/** What a model reads of an example: its tool specs (one segment per tool) and its messages (each as segments). */
export interface ExampleParts {
  tools: readonly string[];
  messages: readonly (readonly string[])[];
}

/** One example's tokens, and how many of them are its tool specs'. */
export interface ExampleTokens {
  total: number;
  tools: number;
}

/** What a chat template adds around each part (role markers, separators). */
export const TOKENS_PER_PART = 3;

export type TokenEncoding = 'o200k_base' | 'cl100k_base';

const COUNTERS: Record<TokenEncoding, (text: string) => number> = { o200k_base: countO200k, cl100k_base: countCl100k };

export function countTokens(text: string, encoding: TokenEncoding = 'o200k_base'): number {
  return COUNTERS[encoding](text);
}

/**
 * Where a text can be cut without changing its tokens. Both encodings' pre-tokenizers start a
 * chunk at each of these, and BPE runs within a chunk, so a text's count is the sum of its
 * pieces':
 * - before a space that follows a non-space and precedes a letter (a chunk never holds a
 *   non-space followed by a space; one that starts with a space and a letter is decided by
 *   what follows), the first after each line break (a real one, or `\n` inside JSON): a
 *   piece is then about a line, the same text wherever that line recurs. A narrowed tool
 *   spec is its database's key lines less some: its pieces are mostly counted already.
 * - before a `"` that follows an ASCII letter or digit: a chunk of letters (with at most one
 *   other character before them, and a contraction such as `'s` after) or of digits never
 *   holds a `"`, and neither side's chunks look past it. In JSON that is the end of every
 *   key and of most strings: a key enum's items, a spec's parameters and a row's keys are
 *   pieces of their own, the same in every spec, row and format that holds them.
 */
const CUT = /(?:\\n|\n)[^\s\\]+(?= \p{L})|[A-Za-z0-9](?=")/gu;

/** The text's pieces, cut where its tokens do not change. */
export function piecesOf(text: string): string[] {
  const pieces: string[] = [];
  let start = 0;
  for (const match of text.matchAll(CUT)) {
    const cut = match.index + match[0].length;
    pieces.push(text.slice(start, cut));
    start = cut;
  }
  pieces.push(text.slice(start));
  return pieces;
}

/** Each distinct segment's and piece's count (a text's count, whichever it is), shared by the counters of one export. */
export type TokenMemo = Map<string, number>;

/** Counts examples given as their parts; each distinct segment is encoded once. */
export class TokenCounter {
  constructor(
    readonly encoding: TokenEncoding = 'o200k_base',
    private readonly memo: TokenMemo = new Map(),
  ) {}

  /** The tool list is one part, each message another, each with the template's markers. */
  count({ tools, messages }: ExampleParts): ExampleTokens {
    const toolTokens = tools.length > 0 ? TOKENS_PER_PART + this.segments(tools) : 0;
    let total = toolTokens;
    for (const segments of messages) total += TOKENS_PER_PART + this.segments(segments);
    return { total, tools: toolTokens };
  }

  private segments(segments: readonly string[]): number {
    let total = 0;
    for (const segment of segments) {
      let count = this.memo.get(segment);
      if (count === undefined) this.memo.set(segment, (count = this.countPieces(segment)));
      total += count;
    }
    return total;
  }

  /** A segment's count as the sum of its pieces' (each distinct piece encoded once). */
  private countPieces(segment: string): number {
    let total = 0;
    for (const piece of piecesOf(segment)) {
      let count = this.memo.get(piece);
      if (count === undefined) this.memo.set(piece, (count = countTokens(piece, this.encoding)));
      total += count;
    }
    return total;
  }
}

/** Statistics of the examples' counts: total, mean, nearest-rank p50 and p95, max, the tool specs' share. */
export function tokenStats(encoding: TokenEncoding, examples: readonly ExampleTokens[]): TokenStats {
  const counts = examples.map((e) => e.total).sort((a, b) => a - b);
  const total = counts.reduce((a, b) => a + b, 0);
  const tools = examples.reduce((sum, e) => sum + e.tools, 0);
  // Nearest rank: the smallest count with at least q of the examples at or below it.
  const quantile = (q: number) => (counts.length ? counts[Math.max(0, Math.ceil(q * counts.length) - 1)] : 0);
  return {
    encoding,
    examples: counts.length,
    total,
    mean: counts.length ? total / counts.length : 0,
    p50: quantile(0.5),
    p95: quantile(0.95),
    max: counts[counts.length - 1] ?? 0,
    toolShare: total ? tools / total : 0,
  };
}
