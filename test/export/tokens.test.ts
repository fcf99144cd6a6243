import {
  countTokens,
  SegmentTokenizer,
  TokenCounter,
  TOKENS_PER_PART,
  type TokenEncoding,
} from '../../export/tokens.js';

/** Token statistics with a tokenizer that ships its vocabulary (no network). */

test('counts tokens with the bundled vocabularies', () => {
  expect(countTokens('hello world')).toBe(2);
  expect(countTokens('hello world', 'cl100k_base')).toBe(2);
  expect(countTokens('')).toBe(0);
});

test('per-export statistics: an example is its parts plus the template per part; total, mean, nearest-rank p50 and p95, max', async () => {
  const counter = new TokenCounter();
  // Parts of 2, 1, 4 and 0 tokens, each with the template's markers.
  counter.add([['hello world']]);
  counter.add([['hello']]);
  counter.add([['hello world'], ['hello', ' world']]);
  counter.add([]);
  const p = TOKENS_PER_PART;
  expect(await counter.stats()).toEqual({
    encoding: 'o200k_base',
    examples: 4,
    total: 7 + 4 * p,
    mean: (7 + 4 * p) / 4,
    p50: 1 + p,
    p95: 4 + 2 * p,
    max: 4 + 2 * p,
  });
  expect(await new TokenCounter(new SegmentTokenizer('cl100k_base')).stats()).toMatchObject({
    encoding: 'cl100k_base',
    examples: 0,
    total: 0,
    p95: 0,
  });
});

test('past its in-process share, a tokenizer counts in a child process: same counts, in order, across batches', async () => {
  const texts = Array.from({ length: 300 }, (_, i) => `segment ${i}: ${'word '.repeat(i % 50)}${'é'.repeat(i % 7)}`);
  const here = new SegmentTokenizer('o200k_base');
  const child = new SegmentTokenizer('o200k_base', 0);
  try {
    const inHere = new TokenCounter(here);
    const inChild = new TokenCounter(child);
    for (const text of texts) {
      inHere.add([[text], [text.toUpperCase()]]);
      inChild.add([[text], [text.toUpperCase()]]);
    }
    expect(await inChild.stats()).toEqual(await inHere.stats());
    expect((await child.allCounts()).slice(0, 3)).toEqual(
      [texts[0], texts[0].toUpperCase(), texts[1]].map((t) => countTokens(t)),
    );
  } finally {
    await child.close();
    await here.close();
  }
});

test('a batch the child cannot count fails the statistics with a clear error, and the child still closes', async () => {
  const tokenizer = new SegmentTokenizer('no_such_encoding' as TokenEncoding, 0);
  const counter = new TokenCounter(tokenizer);
  counter.add([['a segment']]);
  await expect(counter.stats()).rejects.toThrow(/token counting failed/);
  await tokenizer.close();
});
