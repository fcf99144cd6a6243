/**
 * How fast a stage goes: time since its first progress event, the recent rate and the time
 * left at that rate. Pure: every call is given the clock, so tests need no timers.
 */

export interface PaceSnapshot {
  done: number;
  total: number;
  elapsedMs: number;
  /** Items per second: over the last `windowMs` while running, over the whole stage once done; undefined over less than a second. */
  perSecond?: number;
  /** Time left at `perSecond`; undefined while the rate is unknown or zero. */
  etaMs?: number;
}

/** Shorter spans give no rate: the first items of a stage often finish together (a burst, not a pace). */
const MIN_SPAN_MS = 1000;

export class StagePace {
  private readonly samples: { at: number; done: number }[];
  private total: number;
  private finishedAt: number | undefined;

  /** The rate is measured over the last `windowMs`: cache hits at the start of a run do not flatter it for long. */
  constructor(
    private readonly started: { at: number; done: number; total: number },
    private readonly windowMs = 30_000,
  ) {
    this.samples = [{ at: started.at, done: started.done }];
    this.total = started.total;
  }

  record(done: number, total: number, at: number): void {
    this.samples.push({ at, done });
    this.total = total;
    // One sample at or before the window's start stays: the rate spans the whole window.
    while (this.samples.length > 2 && this.samples[1].at <= at - this.windowMs) this.samples.shift();
    this.finishedAt = done >= total ? (this.finishedAt ?? at) : undefined;
  }

  snapshot(now: number): PaceSnapshot {
    const { done } = this.samples[this.samples.length - 1];
    const end = this.finishedAt ?? now;
    const elapsedMs = end - this.started.at;
    const from = this.finishedAt === undefined ? this.windowStart(end) : this.started;
    const spanMs = end - from.at;
    const perSecond = spanMs >= MIN_SPAN_MS ? ((done - from.done) * 1000) / spanMs : undefined;
    const left = this.total - done;
    const etaMs = left <= 0 ? 0 : perSecond ? (left / perSecond) * 1000 : undefined;
    return { done, total: this.total, elapsedMs, perSecond, etaMs };
  }

  /** The last sample at or before the window's start (the first one while the stage is younger than the window). */
  private windowStart(now: number): { at: number; done: number } {
    const cutoff = now - this.windowMs;
    let start = this.samples[0];
    for (const sample of this.samples) if (sample.at <= cutoff) start = sample;
    return start;
  }
}

/** 9s, 4m05s, 2h07m: short enough for a progress line. */
export function formatDuration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}

/** `12.5/s` below 100 items per second, `340/s` above; `-` when unknown. */
export function formatRate(perSecond: number | undefined): string {
  if (perSecond === undefined) return '-';
  return `${perSecond < 100 ? perSecond.toFixed(1) : Math.round(perSecond)}/s`;
}
