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
  private readonly terms: Map<string, number>[];
  private readonly lengths: number[];
  private readonly documentFrequency = new Map<string, number>();
  private readonly averageLength: number;
  private readonly k1: number;
  private readonly b: number;

  constructor(documents: readonly string[], options: Bm25Options = {}) {
    this.k1 = options.k1 ?? 1.2;
    this.b = options.b ?? 0.75;
    this.terms = documents.map((text) => {
      const counts = new Map<string, number>();
      for (const token of tokenize(text)) counts.set(token, (counts.get(token) ?? 0) + 1);
      return counts;
    });
    this.lengths = this.terms.map((counts) => [...counts.values()].reduce((a, b) => a + b, 0));
    this.averageLength = this.lengths.reduce((a, b) => a + b, 0) / Math.max(1, documents.length);
    for (const counts of this.terms) {
      for (const term of counts.keys()) this.documentFrequency.set(term, (this.documentFrequency.get(term) ?? 0) + 1);
    }
  }

  /** The `k` best documents for `query`, best first, `exclude`d ones left out (an item is not its own example). */
  search(query: string, k: number, exclude: ReadonlySet<number> = new Set()): { index: number; score: number }[] {
    const n = this.terms.length;
    const queryTerms = [...new Set(tokenize(query))];
    const scored = this.terms.flatMap((counts, index) => {
      if (exclude.has(index)) return [];
      let score = 0;
      for (const term of queryTerms) {
        const f = counts.get(term);
        if (!f) continue;
        const df = this.documentFrequency.get(term) ?? 0;
        const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
        const norm = this.k1 * (1 - this.b + (this.b * this.lengths[index]) / (this.averageLength || 1));
        score += (idf * f * (this.k1 + 1)) / (f + norm);
      }
      return [{ index, score }];
    });
    return scored.sort((x, y) => y.score - x.score || x.index - y.index).slice(0, k);
  }
}

/** Lower-cased words and numbers (letters of any script); punctuation separates. */
export function tokenize(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}
