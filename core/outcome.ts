/**
 * Stage outcomes. A stage either produces a value or rejects its item with a category;
 * both are terminal and cacheable. Anything thrown is a fault of the run, not of the item:
 * runners retry `TransientError`s with backoff and turn other throws into rejections with
 * category `internal_error`, so one item never takes down another.
 */

export type Outcome<T> = { ok: true; value: T } | { ok: false; category: string; message: string };

export function accept<T>(value: T): Outcome<T> {
  return { ok: true, value };
}

export function reject<T = never>(category: string, message: string): Outcome<T> {
  return { ok: false, category, message };
}

/** Thrown for failures worth retrying (a busy worker, a dropped connection, a 429). */
export class TransientError extends Error {
  override name = 'TransientError';
}

/** Thrown by a stage for a categorized rejection deep inside helper code. */
export class RejectionError extends Error {
  override name = 'RejectionError';
  constructor(
    readonly category: string,
    message: string,
  ) {
    super(message);
  }
}

export function rejectionFrom<T = never>(error: unknown): Outcome<T> | undefined {
  return error instanceof RejectionError ? reject(error.category, error.message) : undefined;
}
