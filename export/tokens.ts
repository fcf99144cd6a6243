import { countTokens as countCl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { countTokens as countO200k } from 'gpt-tokenizer/encoding/o200k_base';
import { fork, type ChildProcess } from 'node:child_process';
import { siblingModule } from '../core/sibling-module.js';

/**
 * Token statistics of an export (issue 13), so that a user can budget a training run: per
 * format and formulation, each example's token count under a tokenizer that ships its
 * vocabulary with the package (gpt-tokenizer, OpenAI's BPE in plain JS: `o200k_base` by
 * default, GPT-4o's; `cl100k_base`, GPT-4's). An example is counted as a model reads it after its chat template: the text of
 * each of its parts (the tool list, each message) plus a fixed few tokens per part for the
 * template's markers, as OpenAI's own estimate does: within a few tokens per part of any one
 * template. A part is given as its segments (one per tool, a message's lines), counted
 * separately: examples share tools, and formats share tool outputs, so each distinct segment
 * is encoded once per export.
 */

export interface TokenStats {
  encoding: TokenEncoding;
  examples: number;
  total: number;
  mean: number;
  p50: number;
  p95: number;
  max: number;
}

/** What a chat template adds around each part (role markers, separators). */
export const TOKENS_PER_PART = 3;

export type TokenEncoding = 'o200k_base' | 'cl100k_base';

const COUNTERS: Record<TokenEncoding, (text: string) => number> = { o200k_base: countO200k, cl100k_base: countCl100k };

export function countTokens(text: string, encoding: TokenEncoding = 'o200k_base'): number {
  return COUNTERS[encoding](text);
}

/**
 * Each distinct segment of an export, counted once: the first `inProcessChars` characters in
 * this process, the rest in a child process (token-worker.ts) while the export goes on with
 * its other work. A BIRD-sized export has tens of megabytes of distinct tool text, seconds of
 * BPE that need not wait for anything.
 */
export class SegmentTokenizer {
  private readonly ids = new Map<string, number>();
  private readonly counts: number[] = [];
  private countedHere = 0;
  private child: TokenChild | undefined;
  private batch: string[] = [];
  private batchChars = 0;

  constructor(
    readonly encoding: TokenEncoding = 'o200k_base',
    private readonly inProcessChars = IN_PROCESS_CHARS,
  ) {}

  /** The segment's id (its count is `(await counts())[id]`). */
  id(segment: string): number {
    let id = this.ids.get(segment);
    if (id !== undefined) return id;
    id = this.ids.size;
    this.ids.set(segment, id);
    if (!this.child && this.countedHere + segment.length <= this.inProcessChars) {
      this.counts[id] = countTokens(segment, this.encoding);
      this.countedHere += segment.length;
      return id;
    }
    this.child ??= new TokenChild(this.encoding);
    this.batch.push(segment);
    this.batchChars += segment.length;
    if (this.batchChars >= BATCH_CHARS) this.flush();
    return id;
  }

  /** Every segment's count so far, by id. */
  async allCounts(): Promise<readonly number[]> {
    this.flush();
    if (this.child)
      for (const [first, counts] of await this.child.results())
        counts.forEach((count, i) => (this.counts[first + i] = count));
    return this.counts;
  }

  async close(): Promise<void> {
    await this.child?.close();
  }

  private flush(): void {
    if (this.batch.length === 0 || !this.child) return;
    this.child.count(this.ids.size - this.batch.length, this.batch);
    this.batch = [];
    this.batchChars = 0;
  }
}

/** Distinct text counted in the export's own process (a small export never starts a child). */
const IN_PROCESS_CHARS = 2_000_000;
/** Text per message to the child. */
const BATCH_CHARS = 1_000_000;

/** The token-counting child process: batches in, their counts out, in order. */
class TokenChild {
  private readonly child: ChildProcess;
  private readonly waiting: { first: number; resolve(counts: number[]): void; reject(error: Error): void }[] = [];
  private readonly done: Promise<[number, number[]]>[] = [];
  private failure: Error | undefined;

  constructor(private readonly encoding: TokenEncoding) {
    const entry = siblingModule(import.meta.url, 'token-worker');
    this.child = fork(entry.path, [], {
      execArgv: entry.execArgv,
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.child.on('message', (reply: TokenReply) => {
      const next = this.waiting.shift();
      if (!next || next.first !== reply.first) return this.fail(new Error('token counting: replies out of order'));
      if ('error' in reply) next.reject(new Error(`token counting failed: ${reply.error}`));
      else next.resolve(reply.counts);
    });
    this.child.on('exit', (code, signal) =>
      this.fail(new Error(`token counting process ended (exit code ${code}, signal ${signal})`)),
    );
    this.child.on('error', (error) => this.fail(error));
  }

  count(first: number, segments: string[]): void {
    const counted = new Promise<number[]>((resolve, reject) => {
      if (this.failure) return reject(this.failure);
      this.waiting.push({ first, resolve, reject });
      this.child.send({ first, encoding: this.encoding, segments } satisfies TokenJob);
    }).then((counts): [number, number[]] => [first, counts]);
    counted.catch(() => undefined); // reported by results(), which the export awaits
    this.done.push(counted);
  }

  /** Every batch's counts, once all are in (the first failure, if any). */
  results(): Promise<[number, number[]][]> {
    return Promise.all(this.done);
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.disconnect();
    await exited;
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const waiting of this.waiting.splice(0)) waiting.reject(this.failure);
  }
}

export interface TokenJob {
  first: number;
  encoding: TokenEncoding;
  segments: string[];
}

export type TokenReply = { first: number; counts: number[] } | { first: number; error: string };

/** Counts examples given as their parts, each a list of segments; each distinct segment is counted once per tokenizer. */
export class TokenCounter {
  /** Per example: its number of parts and its segments' ids. */
  private readonly examples: { parts: number; segments: number[] }[] = [];

  constructor(private readonly tokenizer: SegmentTokenizer = new SegmentTokenizer()) {}

  add(parts: readonly (readonly string[])[]): void {
    const segments: number[] = [];
    for (const part of parts) for (const segment of part) segments.push(this.tokenizer.id(segment));
    this.examples.push({ parts: parts.length, segments });
  }

  async stats(): Promise<TokenStats> {
    const byId = await this.tokenizer.allCounts();
    const counts = this.examples
      .map(({ parts, segments }) => segments.reduce((sum, id) => sum + byId[id], parts * TOKENS_PER_PART))
      .sort((a, b) => a - b);
    const total = counts.reduce((a, b) => a + b, 0);
    // Nearest rank: the smallest count with at least q of the examples at or below it.
    const quantile = (q: number) => (counts.length ? counts[Math.max(0, Math.ceil(q * counts.length) - 1)] : 0);
    return {
      encoding: this.tokenizer.encoding,
      examples: counts.length,
      total,
      mean: counts.length ? total / counts.length : 0,
      p50: quantile(0.5),
      p95: quantile(0.95),
      max: counts[counts.length - 1] ?? 0,
    };
  }
}
