/**
 * mulberry32: a small seeded generator of floats in [0, 1), the same sequence on every
 * platform. For whatever must replay exactly: the demo's rows, property and fuzz tests,
 * bootstrap resamples.
 */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = mulberry32Next(state);
    return mulberry32At(state);
  };
}

/**
 * The same generator as pure functions of its state (the seed, then each `next` of it), for
 * a hot loop that keeps the state in a local variable: a closure's state lives in its
 * context, and drawing through it took twice as long (bootstrap.ts draws millions).
 */
export function mulberry32Next(state: number): number {
  return (state + 0x6d2b79f5) >>> 0;
}

/** The number drawn at `state` (one `mulberry32Next` past the previous). */
export function mulberry32At(state: number): number {
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
