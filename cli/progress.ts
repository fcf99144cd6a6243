import type { ProgressEvent, ProgressListener } from '../pipeline/progress.js';
import { formatDuration, formatRate, StagePace } from './pace.js';

/**
 * Progress on stderr: one bar per stage on a TTY (cli-progress), periodic plain lines
 * otherwise (logs, CI), nothing for `none`. Bars and lines say the same: items done, elapsed
 * time, rate and ETA, behind stage labels padded to the longest one.
 */

export interface ProgressReporter {
  listener: ProgressListener;
  stop(): void;
}

export async function createProgressReporter(
  mode: 'auto' | 'bar' | 'log' | 'none',
  stream: NodeJS.WriteStream = process.stderr,
  intervalMs = 2000,
  clock: () => number = Date.now,
): Promise<ProgressReporter> {
  if (mode === 'none') return { listener: () => {}, stop: () => {} };
  const board = new StageBoard(clock);
  const bars = mode === 'bar' || (mode === 'auto' && stream.isTTY);
  return bars ? barReporter(stream, board) : logReporter(stream, intervalMs, board);
}

/** The stages seen so far with their pace, as aligned text. */
class StageBoard {
  private readonly paces = new Map<string, StagePace>();

  constructor(private readonly clock: () => number) {}

  record(event: ProgressEvent): void {
    const now = this.clock();
    const pace = this.paces.get(event.stage);
    if (pace) pace.record(event.done, event.total, now);
    else this.paces.set(event.stage, new StagePace({ at: now, done: event.done, total: event.total }));
  }

  stages(): string[] {
    return [...this.paces.keys()];
  }

  done(stage: string): number {
    return this.paces.get(stage)?.snapshot(this.clock()).done ?? 0;
  }

  /** Share of the stage done, 0..1 (an empty stage is complete). */
  fraction(stage: string): number {
    const { done, total } = this.paces.get(stage)!.snapshot(this.clock());
    return total > 0 ? Math.min(1, done / total) : 1;
  }

  label(stage: string): string {
    return stage.padEnd(Math.max(...this.stages().map((s) => s.length)));
  }

  /** ` 40/50   80% |   12s elapsed |  3.3/s | ETA 3s`, counts right-aligned across stages. */
  figures(stage: string): string {
    const { done, total, elapsedMs, perSecond, etaMs } = this.paces.get(stage)!.snapshot(this.clock());
    const width = Math.max(...[...this.paces.values()].map((p) => String(p.snapshot(this.clock()).total).length));
    const counts = `${String(done).padStart(width)}/${String(total).padEnd(width)}`;
    const percent = `${total > 0 ? Math.floor((100 * done) / total) : 100}%`.padStart(4);
    const eta = etaMs === 0 ? 'done' : `ETA ${etaMs === undefined ? '?' : formatDuration(etaMs)}`;
    // Widths of the longest usual values (4m05s, 12.5/s): the columns stay put as the numbers change.
    return `${counts} ${percent} | ${formatDuration(elapsedMs).padStart(5)} elapsed | ${formatRate(perSecond).padStart(6)} | ${eta}`;
  }
}

/** cli-progress is loaded only when bars are drawn; it redraws every bar ten times a second (the elapsed time moves). */
async function barReporter(stream: NodeJS.WriteStream, board: StageBoard): Promise<ProgressReporter> {
  const { default: cliProgress } = await import('cli-progress');
  const multibar = new cliProgress.MultiBar(
    {
      stream,
      format: (options, _params, payload: { stage: string }) =>
        `${board.label(payload.stage)} |${cliProgress.Format.BarFormat(board.fraction(payload.stage), options)}| ${board.figures(payload.stage)}`,
      barsize: 30,
      hideCursor: true,
      clearOnComplete: false,
      fps: 10,
    },
    cliProgress.Presets.shades_classic,
  );
  const bars = new Map<string, InstanceType<typeof cliProgress.SingleBar>>();
  return {
    listener(event: ProgressEvent) {
      board.record(event);
      let bar = bars.get(event.stage);
      if (!bar) bars.set(event.stage, (bar = multibar.create(event.total, 0, { stage: event.stage })));
      bar.setTotal(event.total);
      bar.update(event.done);
    },
    stop: () => multibar.stop(),
  };
}

/** Every `intervalMs`, a line per stage that moved since the last print. */
function logReporter(stream: NodeJS.WriteStream, intervalMs: number, board: StageBoard): ProgressReporter {
  const printed = new Map<string, number>();
  const print = () => {
    for (const stage of board.stages()) {
      const done = board.done(stage);
      if (printed.get(stage) === done) continue;
      printed.set(stage, done);
      stream.write(`progress: ${board.label(stage)} ${board.figures(stage)}\n`);
    }
  };
  const timer = setInterval(print, intervalMs);
  timer.unref();
  return {
    listener: (event) => board.record(event),
    stop() {
      clearInterval(timer);
      print();
    },
  };
}
