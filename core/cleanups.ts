/**
 * The cleanups of a shutdown, each run whatever the others do: a part that fails to close
 * must not leave the parts after it open (SQL worker processes, Redis connections keep a
 * process alive). Failures are collected and thrown together at the end, each named after
 * its part, so that none is lost and none stops the rest.
 */
export class Cleanups {
  private readonly failures: Error[] = [];

  /** Runs one cleanup; never throws (its failure is kept for `throwIfFailed`). */
  async run(part: string, cleanup: () => unknown): Promise<void> {
    try {
      await cleanup();
    } catch (error) {
      this.failures.push(
        new Error(`${part}: ${error instanceof Error ? error.message : String(error)}`, { cause: error }),
      );
    }
  }

  /** An AggregateError of every failure so far (`what` says what was being closed), if any. */
  throwIfFailed(what: string): void {
    if (this.failures.length === 0) return;
    throw new AggregateError(this.failures, `${what}: ${this.failures.map((failure) => failure.message).join('; ')}`);
  }
}
