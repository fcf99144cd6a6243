import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { deadline } from '../../generators/llm/provider-entry.js';

// A full collection on demand, without starting jest under --expose-gc.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('deadline, the signal that cuts a provider request', () => {
  test('fires at its deadline even when garbage is collected meanwhile (the request follows it, nothing else holds it)', async () => {
    const seen: boolean[] = [];
    const requests = [0, 1, 2].map((i) => {
      // As the Mistral transport does: a Request rebuilt with the deadline over its own signal.
      const request = new Request('http://127.0.0.1:1/', { signal: deadline(new AbortController().signal, 150) });
      seen[i] = false;
      request.signal.addEventListener('abort', () => (seen[i] = true));
      return request;
    });
    for (let i = 0; i < 10 && !seen.every(Boolean); i++) {
      collectGarbage();
      await sleep(100);
    }
    expect(seen).toEqual([true, true, true]);
    expect(requests.map((r) => (r.signal.reason as DOMException).name)).toEqual(Array(3).fill('TimeoutError'));
  });

  test("the caller's abort passes through before the deadline, with the caller's reason", () => {
    const caller = new AbortController();
    const signal = deadline(caller.signal, 60_000);
    caller.abort(new Error('stopped'));
    expect(signal.aborted).toBe(true);
    expect((signal.reason as Error).message).toBe('stopped');
  });

  test('an already aborted caller signal gives an aborted deadline; no signal gives the deadline alone', async () => {
    expect(deadline(AbortSignal.abort('gone'), 60_000).reason).toBe('gone');
    const alone = deadline(undefined, 20);
    expect(alone.aborted).toBe(false);
    await sleep(200);
    expect(alone.aborted).toBe(true);
  });
});
