/**
 * Whether `work` settles before `signal` is aborted (false at once if it already is; a
 * failure of `work` is thrown). `work` goes on either way: only the waiting stops, so that a
 * shutdown can give up on a step that waits on something gone (a Redis that does not answer).
 */
export function settlesUnlessAborted(work: Promise<unknown>, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(false);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    // Both outcomes handled: a failure after the abort is dropped, not left unhandled.
    work.then(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve(true);
      },
      (error: Error) => {
        signal?.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
