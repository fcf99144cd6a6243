import { countTokens, tokenStats } from '../../export/tokens.js';

/** Token statistics with a tokenizer that ships its vocabulary (no network). */

test('counts tokens with the bundled vocabularies', () => {
  expect(countTokens('hello world')).toBe(2);
  expect(countTokens('hello world', 'cl100k_base')).toBe(2);
  expect(countTokens('')).toBe(0);
});

test('per-export statistics: total, mean, nearest-rank p50 and p95, max', () => {
  const lines = ['hello world', 'hello', 'hello world hello world', ''];
  // Counts 2, 1, 4, 0 → sorted 0, 1, 2, 4.
  expect(tokenStats(lines)).toEqual({ encoding: 'o200k_base', lines: 4, total: 7, mean: 1.75, p50: 1, p95: 4, max: 4 });
  expect(tokenStats([])).toMatchObject({ lines: 0, total: 0, mean: 0, p50: 0, p95: 0, max: 0 });
});
