import type { DatabaseInfo, Instance } from '../../core/model.js';
import { runByDatabase, type DatabasePart } from '../../pipeline/runner/by-database.js';
import type { RunResult } from '../../pipeline/runner/in-process.js';
import type { RestRunResult } from '../../pipeline/runner/rest.js';
import type { ItemResult } from '../../pipeline/samples.js';

const db = (dbId: string) => ({ dbId, path: `/nowhere/${dbId}.sqlite` }) as DatabaseInfo;
const instance = (dbId: string, index: number) => ({ dbId, index, id: `${dbId}/${index}` }) as unknown as Instance;

/** SLOT/SEL runners the test finishes by hand, database by database. */
function scriptedSequences() {
  const events: string[] = [];
  const finish = new Map<string, (result: RunResult | Error) => void>();
  const sequences = (part: DatabasePart) => {
    const dbId = part.databases[0]?.dbId ?? part.instances[0].dbId;
    events.push(`start ${dbId}`);
    return new Promise<RunResult>((resolve, reject) =>
      finish.set(dbId, (result) => {
        events.push(`finish ${dbId}`);
        if (result instanceof Error) reject(result);
        else resolve(result);
      }),
    );
  };
  const done = (part: { instances: Instance[] }): RunResult => ({
    items: part.instances.map((i) => ({ instance: i, results: {} })),
    metrics: new Map([['gold', { cacheHits: 0, runs: part.instances.length, retries: 0, ms: 1 }]]),
    aborted: false,
  });
  return { events, finish, sequences, done };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('runByDatabase', () => {
  const dbs = ['a', 'b', 'c'].map(db);
  const instances = [instance('a', 0), instance('b', 1), instance('c', 2), instance('b', 3)];

  test('two databases in flight; emitted in id order when a later one finishes first; the third waits for the first to be emitted', async () => {
    const { events, finish, sequences, done } = scriptedSequences();
    const emitted: string[] = [];
    const run = runByDatabase(dbs, instances, { sequences, rest: null, chains: null }, 4, async (d, items) => {
      events.push(`emit ${d!.dbId}`);
      emitted.push(...items.map((item) => item.instance.index.toString()));
    });
    await settle();
    expect(events).toEqual(['start a', 'start b']);
    finish.get('b')!(done({ instances: [instances[1], instances[3]] }));
    await settle();
    expect(events).toEqual(['start a', 'start b', 'finish b']);
    finish.get('a')!(done({ instances: [instances[0]] }));
    await settle();
    expect(events).toEqual(['start a', 'start b', 'finish b', 'finish a', 'emit a', 'start c', 'emit b']);
    finish.get('c')!(done({ instances: [instances[2]] }));
    const result = await run;
    expect(emitted).toEqual(['0', '1', '3', '2']);
    expect(result).toMatchObject({ aborted: false });
    expect(result.metrics.get('gold')).toMatchObject({ runs: 4 });
  });

  test("REST results join their database's items; its dedup figures are the run's", async () => {
    const rest = async (part: DatabasePart): Promise<RestRunResult> => ({
      results: new Map(part.instances.map((i) => [i, { ok: false, stage: 'gold', category: 'x', message: 'm' }])),
      dedup: { byDb: { [part.databases[0].dbId]: { before: 1, after: 1, published: 0 } }, merges: [] },
      metrics: new Map(),
      aborted: false,
    });
    const items: ItemResult[] = [];
    const result = await runByDatabase(dbs, instances, { sequences: null, rest, chains: null }, 2, async (_, its) => {
      items.push(...its);
    });
    expect(items.map((item) => item.results.rest?.ok)).toEqual([false, false, false, false]);
    expect(Object.keys(result.dedup!.byDb)).toEqual(['a', 'b', 'c']);
  });

  test('an interrupted database ends the run as aborted once the one overlapping it has finished', async () => {
    const { events, finish, sequences, done } = scriptedSequences();
    const run = runByDatabase(dbs, instances, { sequences, rest: null, chains: null }, 2, async (d) => {
      events.push(`emit ${d!.dbId}`);
    });
    await settle();
    finish.get('a')!({ ...done({ instances: [] }), aborted: true });
    await settle();
    expect(events).toEqual(['start a', 'start b', 'finish a']);
    finish.get('b')!(done({ instances: [instances[1], instances[3]] }));
    expect(await run).toMatchObject({ aborted: true });
    expect(events).toEqual(['start a', 'start b', 'finish a', 'finish b']);
  });

  test('a runner that throws fails the run after the other database in flight settles, however that one ends', async () => {
    const { events, finish, sequences } = scriptedSequences();
    const run = runByDatabase(dbs, instances, { sequences, rest: null, chains: null }, 2, async () => {});
    const outcome = run.then(
      () => 'resolved',
      (error: Error) => error.message,
    );
    await settle();
    // The overlapping database fails first: observed, not an unhandled rejection.
    finish.get('b')!(new Error('b broke'));
    await settle();
    finish.get('a')!(new Error('a broke'));
    expect(await outcome).toBe('a broke');
    expect(events).toEqual(['start a', 'start b', 'finish b', 'finish a']);
  });
});
