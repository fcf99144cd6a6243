/** Runs `task` when a slot is free; the promise settles as the task does. */
export type Limit = <T>(task: () => Promise<T>) => Promise<T>;

/**
 * At most `concurrency` tasks running at once over any number of lanes, where a freed slot
 * goes to the waiting task of the lowest rank (first come, first served within a rank).
 * The run by database (pipeline/runner/by-database.ts) gives each database its position as
 * rank: a database overlapping the one before it only takes the slots that one leaves idle
 * (its last items, a phase's barrier), and never holds back the database to be emitted next.
 */
export class PriorityLimit {
  private running = 0;
  /** Waiting starts by rank; a rank's queue is consumed from `head` (no shifting). */
  private readonly waiting = new Map<number, { starts: (() => void)[]; head: number }>();

  constructor(private readonly concurrency: number) {
    if (!Number.isInteger(concurrency) || concurrency < 1)
      throw new Error(`concurrency must be a positive integer, got ${concurrency}`);
  }

  lane(rank: number): Limit {
    return <T>(task: () => Promise<T>) =>
      new Promise<T>((resolve, reject) => {
        const start = () => {
          this.running++;
          // A task that throws before its first await rejects like one that fails later.
          Promise.resolve()
            .then(task)
            .then(resolve, reject)
            .finally(() => {
              this.running--;
              this.startWaiting();
            });
        };
        const queue = this.waiting.get(rank) ?? { starts: [], head: 0 };
        queue.starts.push(start);
        this.waiting.set(rank, queue);
        this.startWaiting();
      });
  }

  private startWaiting(): void {
    while (this.running < this.concurrency && this.waiting.size > 0) {
      const rank = Math.min(...this.waiting.keys());
      const queue = this.waiting.get(rank)!;
      const start = queue.starts[queue.head++];
      if (queue.head === queue.starts.length) this.waiting.delete(rank);
      start();
    }
  }
}
