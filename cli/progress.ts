import type { ProgressEvent, ProgressListener } from '../pipeline/progress.js';

/**
 * Progress on stderr: one bar per stage on a TTY (cli-progress), periodic plain lines
 * otherwise (logs, CI), nothing for `none`.
 */

export interface ProgressReporter {
  listener: ProgressListener;
  stop(): void;
}

export async function createProgressReporter(
  mode: 'auto' | 'bar' | 'log' | 'none',
  stream: NodeJS.WriteStream = process.stderr,
  intervalMs = 2000,
): Promise<ProgressReporter> {
  if (mode === 'none') return { listener: () => {}, stop: () => {} };
  const bars = mode === 'bar' || (mode === 'auto' && stream.isTTY);
  return bars ? barReporter(stream) : logReporter(stream, intervalMs);
}

/** cli-progress is loaded only when bars are drawn. */
async function barReporter(stream: NodeJS.WriteStream): Promise<ProgressReporter> {
  const { default: cliProgress } = await import('cli-progress');
  const multibar = new cliProgress.MultiBar(
    {
      stream,
      format: '{stage} |{bar}| {value}/{total}',
      hideCursor: true,
      clearOnComplete: false,
      fps: 10,
    },
    cliProgress.Presets.shades_classic,
  );
  const bars = new Map<string, InstanceType<typeof cliProgress.SingleBar>>();
  return {
    listener(event: ProgressEvent) {
      let bar = bars.get(event.stage);
      if (!bar) {
        bar = multibar.create(event.total, 0, { stage: event.stage.padEnd(14) });
        bars.set(event.stage, bar);
      }
      bar.setTotal(event.total);
      bar.update(event.done, { stage: event.stage.padEnd(14) });
    },
    stop: () => multibar.stop(),
  };
}

function logReporter(stream: NodeJS.WriteStream, intervalMs: number): ProgressReporter {
  const latest = new Map<string, ProgressEvent>();
  let last = '';
  const print = () => {
    const line = [...latest.values()].map((e) => `${e.stage} ${e.done}/${e.total}`).join(', ');
    if (line && line !== last) stream.write(`progress: ${line}\n`);
    last = line;
  };
  const timer = setInterval(print, intervalMs);
  timer.unref();
  return {
    listener: (event) => void latest.set(event.stage, event),
    stop() {
      clearInterval(timer);
      print();
    },
  };
}
