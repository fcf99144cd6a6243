import { Cleanups } from '../../core/cleanups.js';

describe('Cleanups', () => {
  test('every cleanup runs, whatever the ones before did; the failures are thrown together, named', async () => {
    const cleanups = new Cleanups();
    const ran: string[] = [];
    await cleanups.run('first', () => {
      ran.push('first');
      throw new Error('boom');
    });
    await cleanups.run('second', async () => void ran.push('second'));
    await cleanups.run('third', () => Promise.reject(new Error('bang')));
    expect(ran).toEqual(['first', 'second']);
    let thrown: unknown;
    try {
      cleanups.throwIfFailed('closing');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(AggregateError);
    expect((thrown as AggregateError).message).toBe('closing: first: boom; third: bang');
    expect((thrown as AggregateError).errors.map((e: Error) => (e.cause as Error).message)).toEqual(['boom', 'bang']);
  });

  test('nothing failed: nothing thrown', async () => {
    const cleanups = new Cleanups();
    await cleanups.run('only', () => undefined);
    expect(() => cleanups.throwIfFailed('closing')).not.toThrow();
  });
});
