import { expect, test } from '@jest/globals';
import { SuspectIsolation } from '../../pipeline/queue/isolation.js';

/** Records how many jobs are in flight whenever one starts, and the fetching switch. */
function harness() {
  let inFlight = 0;
  const events: string[] = [];
  const job = (name: string, ms: number) => async () => {
    events.push(`${name} starts beside ${inFlight}`);
    inFlight++;
    await new Promise((resolve) => setTimeout(resolve, ms));
    inFlight--;
    return name;
  };
  const isolation = new SuspectIsolation({
    pause: async () => void events.push('fetching paused'),
    resume: () => void events.push('fetching resumed'),
  });
  const run = (name: string, suspect: boolean, ms = 20) =>
    isolation.run(
      async () => suspect,
      job(name, ms),
      async () => {
        events.push(`${name} handed back`);
        throw new Error(`postponed ${name}`);
      },
    );
  return { run, events };
}

test('ordinary jobs run side by side, fetching untouched', async () => {
  const { run, events } = harness();
  await Promise.all(['a', 'b', 'c'].map((n) => run(n, false)));
  expect(events).toEqual(['a starts beside 0', 'b starts beside 1', 'c starts beside 2']);
});

test('a suspect is handed back while the worker holds other jobs; in an empty worker it runs alone, fetching paused, and jobs reaching it meanwhile are handed back', async () => {
  const { run, events } = harness();
  // The long jobs last long enough that a stalled test process still asks while they run.
  const first = run('first', false, 500);
  await expect(run('early suspect', true)).rejects.toThrow('postponed early suspect');
  expect(await first).toBe('first');
  const suspect = run('suspect', true, 500);
  await new Promise((resolve) => setTimeout(resolve, 5));
  await expect(run('later', false)).rejects.toThrow('postponed later');
  await expect(run('other suspect', true)).rejects.toThrow('postponed other suspect');
  expect(await suspect).toBe('suspect');
  expect(await run('next', false)).toBe('next');
  expect(events).toEqual([
    'first starts beside 0',
    'early suspect handed back',
    'fetching paused',
    'suspect starts beside 0',
    'later handed back',
    'other suspect handed back',
    'fetching resumed',
    'next starts beside 0',
  ]);
});

test('a failing suspect resumes fetching', async () => {
  const isolation = new SuspectIsolation({ pause: async () => {}, resume: () => {} });
  const never = async (): Promise<never> => {
    throw new Error('postponed');
  };
  await expect(
    isolation.run(
      async () => true,
      async () => Promise.reject(new Error('crash')),
      never,
    ),
  ).rejects.toThrow('crash');
  expect(
    await isolation.run(
      async () => false,
      async () => 'ok',
      never,
    ),
  ).toBe('ok');
});
