import { mulberry32At, mulberry32Next } from '../../core/random.js';

/**
 * A percentile bootstrap confidence interval of a mean (Efron & Tibshirani, An Introduction
 * to the Bootstrap):
 * `resamples` samples of the per-item values drawn with replacement, the mean of each, and
 * the (1-level)/2 and (1+level)/2 quantiles of those means. Seeded (mulberry32), so a
 * report is the same every time it is built from the same results.
 */
export function bootstrapInterval(
  values: readonly number[],
  options: { level?: number; resamples?: number; seed?: number } = {},
): { mean: number; low: number; high: number } {
  const { level = 0.95, resamples = 1000, seed = 1 } = options;
  if (values.length === 0) return { mean: 0, low: 0, high: 0 };
  const n = values.length;
  const mean = values.reduce((a, b) => a + b, 0) / n;
  // Every resample of equal values sums the same numbers in the same order as the mean: each
  // resampled mean is `mean`, to the last bit (a group every attempt of which completed, or none).
  if (values.every((v) => v === values[0])) return { mean, low: mean, high: mean };
  // mulberry32(seed)'s draws, its state kept here: a summary draws ~20 million (n × resamples per interval).
  let state = seed >>> 0;
  const means = new Float64Array(resamples);
  for (let k = 0; k < resamples; k++) {
    let sum = 0;
    for (let i = 0; i < n; i++) {
      state = mulberry32Next(state);
      sum += values[Math.floor(mulberry32At(state) * n)];
    }
    means[k] = sum / n;
  }
  means.sort();
  const at = (q: number) => means[Math.min(resamples - 1, Math.max(0, Math.floor(q * resamples)))];
  return { mean, low: at((1 - level) / 2), high: at((1 + level) / 2) };
}
