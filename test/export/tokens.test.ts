import { countTokens, TokenCounter, TOKENS_PER_PART } from '../../export/tokens.js';

/** Token statistics with a tokenizer that ships its vocabulary (no network). */

test('counts tokens with the bundled vocabularies', () => {
  expect(countTokens('hello world')).toBe(2);
  expect(countTokens('hello world', 'cl100k_base')).toBe(2);
  expect(countTokens('')).toBe(0);
});

test('per-export statistics: an example is its parts plus the template per part; total, mean, nearest-rank p50 and p95, max', () => {
  const counter = new TokenCounter();
  // Parts of 2, 1, 4 and 0 tokens, each with the template's markers.
  counter.add([['hello world']]);
  counter.add([['hello']]);
  counter.add([['hello world'], ['hello', ' world']]);
  counter.add([]);
  const p = TOKENS_PER_PART;
  expect(counter.stats()).toEqual({
    encoding: 'o200k_base',
    examples: 4,
    total: 7 + 4 * p,
    mean: (7 + 4 * p) / 4,
    p50: 1 + p,
    p95: 4 + 2 * p,
    max: 4 + 2 * p,
  });
  expect(new TokenCounter('cl100k_base').stats()).toMatchObject({
    encoding: 'cl100k_base',
    examples: 0,
    total: 0,
    p95: 0,
  });
});
