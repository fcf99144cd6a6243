/**
 * Okapi BM25 (Robertson & Zaragoza, "The Probabilistic Relevance Framework: BM25 and
 * Beyond", 2009) over short texts: the retriever of the `baseline:knn` model and of the
 * in-context examples (`--shots`). Scores a query against every document:
 *   Σ over query terms t of idf(t) · f(t,d)·(k1+1) / (f(t,d) + k1·(1 − b + b·|d|/avgdl)),
 *   idf(t) = ln(1 + (N − n(t) + 0.5) / (n(t) + 0.5)),
 * with k1 = 1.2 and b = 0.75. Ties keep the documents' order, so a result is deterministic.
 */

export interface Bm25Options {
  k1?: number;
  b?: number;
}

export class Bm25Index {
  /**
   * Per term, the documents that have it (in document order) and how often: a query scores
   * only the documents that share a word with it, not every document for each of its words.
   */
  private readonly postings = new Map<string, { index: number; f: number }[]>();
  private readonly lengths: number[];
  private readonly averageLength: number;
  private readonly k1: number;
  private readonly b: number;

  constructor(documents: readonly string[], options: Bm25Options = {}) {
    this.k1 = options.k1 ?? 1.2;
    this.b = options.b ?? 0.75;
    this.lengths = documents.map((text, index) => {
      const counts = new Map<string, number>();
      const tokens = tokenize(text);
      for (const token of tokens) counts.set(token, (counts.get(token) ?? 0) + 1);
      for (const [term, f] of counts) {
        let list = this.postings.get(term);
        if (!list) this.postings.set(term, (list = []));
        list.push({ index, f });
      }
      return tokens.length;
    });
    this.averageLength = this.lengths.reduce((a, b) => a + b, 0) / Math.max(1, documents.length);
  }

  /** The `k` best documents for `query`, best first, `exclude`d ones left out (an item is not its own example). */
  search(query: string, k: number, exclude: ReadonlySet<number> = new Set()): { index: number; score: number }[] {
    const n = this.lengths.length;
    // Each document's terms added in the query's order, as the formula sums them.
    const scores = new Float64Array(n);
    for (const term of new Set(tokenize(query))) {
      const list = this.postings.get(term);
      if (!list) continue;
      const df = list.length;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      for (const { index, f } of list) {
        const norm = this.k1 * (1 - this.b + (this.b * this.lengths[index]) / (this.averageLength || 1));
        scores[index] += (idf * f * (this.k1 + 1)) / (f + norm);
      }
    }
    // The k best kept in order as the documents come (k is a few examples, the documents a
    // database's questions: sorting them all for each query cost more than scoring them).
    // Documents come in order, so one that ties with those kept goes after them.
    const best: number[] = [];
    for (let index = 0; index < n; index++) {
      if (exclude.has(index)) continue;
      let at = best.length;
      while (at > 0 && scores[best[at - 1]] < scores[index]) at--;
      if (at >= k) continue;
      best.splice(at, 0, index);
      if (best.length > k) best.pop();
    }
    return best.map((index) => ({ index, score: scores[index] }));
  }
}

/** Lower-cased words and numbers (letters of any script); punctuation separates. */
export function tokenize(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}
