import { PriorityLimit } from '../../core/priority-limit.js';

/** A task that runs until `release()`; `started` tells whether it got a slot. */
function gate(log: string[], name: string) {
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  return {
    task: async () => {
      log.push(name);
      await done;
      return name;
    },
    release: () => release(),
  };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('PriorityLimit', () => {
  test('runs at most `concurrency` tasks; a freed slot goes to the lowest rank, first come first served within it', async () => {
    const limits = new PriorityLimit(2);
    const started: string[] = [];
    const tasks = Object.fromEntries(['a1', 'a2', 'b1', 'b2', 'a3', 'a4'].map((name) => [name, gate(started, name)]));
    const lane = { a: limits.lane(0), b: limits.lane(1) };
    const results = [
      lane.a(tasks.a1.task),
      lane.a(tasks.a2.task),
      lane.b(tasks.b1.task),
      lane.b(tasks.b2.task),
      lane.a(tasks.a3.task),
      lane.a(tasks.a4.task),
    ];
    await settle();
    expect(started).toEqual(['a1', 'a2']);
    tasks.a1.release();
    await settle();
    // b1 and b2 came first, but rank 0 waits too: it goes first.
    expect(started).toEqual(['a1', 'a2', 'a3']);
    tasks.a2.release();
    tasks.a3.release();
    await settle();
    expect(started).toEqual(['a1', 'a2', 'a3', 'a4', 'b1']);
    tasks.a4.release();
    await settle();
    expect(started).toEqual(['a1', 'a2', 'a3', 'a4', 'b1', 'b2']);
    tasks.b1.release();
    tasks.b2.release();
    expect(await Promise.all(results)).toEqual(['a1', 'a2', 'b1', 'b2', 'a3', 'a4']);
  });

  test('a task that fails, before or after its first await, rejects its own promise and frees its slot', async () => {
    const limit = new PriorityLimit(1).lane(0);
    const thrown = limit(() => {
      throw new Error('at once');
    });
    const rejected = limit(async () => {
      await settle();
      throw new Error('later');
    });
    const next = limit(async () => 'ran');
    await expect(thrown).rejects.toThrow('at once');
    await expect(rejected).rejects.toThrow('later');
    await expect(next).resolves.toBe('ran');
  });

  test('refuses a concurrency that is not a positive integer', () => {
    expect(() => new PriorityLimit(0)).toThrow('positive integer');
    expect(() => new PriorityLimit(1.5)).toThrow('positive integer');
  });
});
