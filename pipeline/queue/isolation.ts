/**
 * Suspects run alone. When a worker process dies (a native crash, an out-of-memory kill, a
 * poison job), every job it had in hand is stalled and taken back, the culprit and its
 * innocent neighbours alike. A job that has stalled before is a suspect: it runs only in a
 * process that holds no other job (else it is handed back to the queue, `postpone`, to come
 * back later — at the latest when the queues run dry), and while it runs the process stops
 * fetching and hands back whatever still reaches it. A suspect is thus never exposed to a
 * neighbour's crash, and its own crash takes no neighbour with it: a poison job fails alone,
 * judged only by the crashes it had alone (worker.ts: `maxStalls`).
 */

export interface Fetching {
  /** Stop taking new jobs (the jobs in hand go on). */
  pause(): Promise<void>;
  resume(): void;
}

export class SuspectIsolation {
  /** Jobs in this process, from the moment they reach it. */
  private held = 0;
  private suspectRunning = false;

  constructor(private readonly fetching: Fetching) {}

  async run<T>(isSuspect: () => Promise<boolean>, work: () => Promise<T>, postpone: () => Promise<never>): Promise<T> {
    this.held++;
    try {
      const suspect = await isSuspect();
      if (this.suspectRunning || (suspect && this.held > 1)) return await postpone();
      if (!suspect) return await work();
      this.suspectRunning = true;
      await this.fetching.pause();
      try {
        return await work();
      } finally {
        this.suspectRunning = false;
        this.fetching.resume();
      }
    } finally {
      this.held--;
    }
  }
}
