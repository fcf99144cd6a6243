import { formatDuration, formatRate, StagePace } from '../../cli/pace.js';
import { createProgressReporter } from '../../cli/progress.js';

describe('stage pace', () => {
  test('elapsed time, the rate over the recent window and the time left at that rate', () => {
    const pace = new StagePace({ at: 0, done: 0, total: 100 }, 10_000);
    expect(pace.snapshot(0)).toEqual({ done: 0, total: 100, elapsedMs: 0, perSecond: undefined, etaMs: undefined });
    // A burst at the start is no pace: no rate over less than a second.
    pace.record(8, 100, 200);
    expect(pace.snapshot(300)).toMatchObject({ perSecond: undefined, etaMs: undefined });
    pace.record(10, 100, 5_000);
    expect(pace.snapshot(5_000)).toEqual({ done: 10, total: 100, elapsedMs: 5_000, perSecond: 2, etaMs: 45_000 });
    // 60 items in the first 20 s, then 10 in the next 20: the rate is the recent one.
    pace.record(60, 100, 20_000);
    pace.record(70, 100, 40_000);
    expect(pace.snapshot(40_000)).toMatchObject({ elapsedMs: 40_000, perSecond: 0.5, etaMs: 60_000 });
    // Stalled: the rate falls, the ETA is unknown once nothing moved over the window.
    expect(pace.snapshot(60_000).etaMs).toBeUndefined();
  });

  test('a finished stage keeps its elapsed time and reports its average rate', () => {
    const pace = new StagePace({ at: 1_000, done: 0, total: 4 });
    pace.record(4, 4, 3_000);
    expect(pace.snapshot(9_000)).toEqual({ done: 4, total: 4, elapsedMs: 2_000, perSecond: 2, etaMs: 0 });
  });

  test('durations and rates read at a glance', () => {
    expect([formatDuration(9_400), formatDuration(245_000), formatDuration(7_620_000)]).toEqual([
      '9s',
      '4m05s',
      '2h07m',
    ]);
    expect([formatRate(undefined), formatRate(3.333), formatRate(340.4)]).toEqual(['-', '3.3/s', '340/s']);
  });
});

describe('progress log lines', () => {
  test('one aligned line per stage that moved, with elapsed time, rate and ETA', async () => {
    let now = 0;
    const lines: string[] = [];
    const stream = { isTTY: false, write: (text: string) => lines.push(text) } as unknown as NodeJS.WriteStream;
    const reporter = await createProgressReporter('log', stream, 3_600_000, () => now);
    reporter.listener({ stage: 'gold', done: 0, total: 40 });
    reporter.listener({ stage: 'rest.synthesize', done: 0, total: 40 });
    now = 10_000;
    reporter.listener({ stage: 'gold', done: 10, total: 40 });
    reporter.stop();
    expect(lines.join('')).toBe(
      'progress: gold            10/40  25% |   10s elapsed |  1.0/s | ETA 30s\n' +
        'progress: rest.synthesize  0/40   0% |   10s elapsed |  0.0/s | ETA ?\n',
    );
    // Only what moved is printed again.
    now = 20_000;
    reporter.listener({ stage: 'gold', done: 40, total: 40 });
    reporter.stop();
    expect(lines.at(-1)).toBe('progress: gold            40/40 100% |   20s elapsed |  2.0/s | done\n');
  });
});
