import { CallNames } from '../../eval/call-names.js';

/** How a model names its calls' outputs (eval/call-names.ts): labels optional, ids and positions understood. */

const S = '$starting_table_var$';
const filter = (args: Record<string, unknown> = {}) => ({
  name: 'filter_data',
  arguments: { data_source: S, ...args },
});
const retrieve = (source: string) => ({ name: 'retrieve_data', arguments: { data_source: source, key_name: 'name' } });

describe('one reply', () => {
  test('native calls with ids: each output is named by its id', () => {
    const names = new CallNames(['starting_table_var']);
    const calls = names.name([
      { ...filter(), id: 'call_0' },
      { ...retrieve('$call_0$'), id: 'call_1' },
    ]);
    expect(calls.map((c) => [c.label, c.id, c.arguments.data_source])).toEqual([
      ['call_0', 'call_0', S],
      ['call_1', 'call_1', '$call_0$'],
    ]);
  });

  test('random ids a model could not know: references by position reach them', () => {
    const calls = new CallNames().name([
      { ...filter(), id: 'call_Xy7' },
      { ...retrieve('$call_0.name$'), id: 'call_Q2b' },
    ]);
    expect(calls[1].arguments.data_source).toBe('$call_Xy7.name$');
  });

  test('an id wins over a position of the same name', () => {
    // Ids counted from 1: "$call_1$" is the call whose id is call_1, the first.
    const calls = new CallNames().name([
      { ...filter(), id: 'call_1' },
      { ...retrieve('$call_1$'), id: 'call_2' },
    ]);
    expect(calls[1].arguments.data_source).toBe('$call_1$');
    expect(calls[0].label).toBe('call_1');
  });

  test('labels, when given, name the outputs; calls without label or id get call_<n>', () => {
    const calls = new CallNames().name([{ ...filter(), label: 'F' }, retrieve('$F$'), retrieve('$call_1$')]);
    expect(calls.map((c) => c.label)).toEqual(['F', 'call_1', 'call_2']);
    expect(calls.map((c) => c.arguments.data_source)).toEqual([S, '$F$', '$call_1$']);
  });

  test('a clash or an unusable name gets a fresh name; an unknown reference is left for the runtime to refuse', () => {
    const calls = new CallNames(['starting_table_var']).name([
      { ...filter(), label: 'starting_table_var' },
      { ...filter(), id: 'has space' },
      retrieve('$nowhere$'),
    ]);
    expect(calls.map((c) => c.label)).toEqual(['call_0', 'call_1', 'call_2']);
    expect(calls[2].arguments.data_source).toBe('$nowhere$');
  });
});

describe('across ReAct turns', () => {
  test('the same id again gets a fresh handle; a reference to it means the earlier output', () => {
    const names = new CallNames();
    const [first] = names.name([{ ...filter(), id: 'call_0' }]);
    const [second] = names.name([{ ...retrieve('$call_0$'), id: 'call_0' }]);
    expect([first.label, second.label]).toEqual(['call_0', 'call_1']);
    expect(second.arguments.data_source).toBe('$call_0$');
    expect(names.labelOf('call_1')).toBe('call_1');
  });

  test('a failed call gives its names back to the corrected one', () => {
    const names = new CallNames();
    const [failed] = names.name([{ ...filter({ key_name: 'nope' }), label: 'F' }]);
    names.forget(failed.label);
    const [fixed] = names.name([{ ...filter({ key_name: 'city' }), label: 'F' }]);
    const [next] = names.name([retrieve('$F$')]);
    expect(fixed.label).toBe('F');
    expect(next.arguments.data_source).toBe('$F$');
  });
});
