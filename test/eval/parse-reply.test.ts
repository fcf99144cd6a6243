import { parseReply } from '../../eval/parse/reply.js';
import { PythonSyntaxError, readCallExpressions, readPythonLiteral } from '../../eval/parse/python-literal.js';

/** What models really emit, read into calls; what cannot be read is a failure, never a throw. */

const filter = {
  name: 'filter_data',
  arguments: { data_source: '$starting_table_var$', key_name: 'city', condition: 'equal_to', value: 'Oslo' },
  label: 'FILTER_1',
};
const retrieve = {
  name: 'retrieve_data',
  arguments: { data_source: '$FILTER_1$', key_name: 'name' },
  label: 'SELECT_1',
};
const json = JSON.stringify([filter, retrieve]);

describe('parseReply', () => {
  test.each([
    ['plain JSON', json, 'json'],
    [
      'a ```json fence with prose around it',
      `Here you go:\n\`\`\`json\n${json}\n\`\`\`\nHope this helps.`,
      'code_fence',
    ],
    ['JSON lines', `${JSON.stringify(filter)}\n${JSON.stringify(retrieve)}`, 'json_lines'],
    [
      '<tool_call> blocks (Hermes, Qwen)',
      `<tool_call>\n${JSON.stringify(filter)}\n</tool_call>\n<tool_call>${JSON.stringify(retrieve)}</tool_call>`,
      'tool_call_tags',
    ],
    ['JSON amid prose', `I will filter, then retrieve. ${json} That is all.`, 'embedded_json'],
    [
      'a Python-literal list',
      "[{'name': 'filter_data', 'arguments': {'data_source': '$starting_table_var$', 'key_name': 'city', 'condition': 'equal_to', 'value': 'Oslo'}, 'label': 'FILTER_1'}, {'name': 'retrieve_data', 'arguments': {'data_source': '$FILTER_1$', 'key_name': 'name'}, 'label': 'SELECT_1'}]",
      'python',
    ],
  ])('%s', (_, content, via) => {
    expect(parseReply({ content })).toEqual({ ok: true, calls: [filter, retrieve], via });
  });

  test('native tool calls, the label among the arguments and arguments as a JSON string', () => {
    const reply = {
      content: '',
      toolCalls: [
        { name: 'filter_data', args: { ...filter.arguments, label: 'FILTER_1' } },
        { name: 'retrieve_data', args: { ...retrieve.arguments, label: 'SELECT_1' } },
      ],
    };
    expect(parseReply(reply)).toEqual({ ok: true, calls: [filter, retrieve], via: 'native' });
    const openai = {
      function: { name: 'retrieve_data', arguments: JSON.stringify(retrieve.arguments) },
      label: 'SELECT_1',
    };
    expect(parseReply({ content: JSON.stringify([openai]) })).toMatchObject({ ok: true, calls: [retrieve] });
  });

  test('Python call syntax', () => {
    const content = `[filter_data(data_source="$starting_table_var$", key_name='city', condition="equal_to", value="Oslo"), retrieve_data(data_source="$FILTER_1$", key_name="name", distinct=False, limit=None)]`;
    expect(parseReply({ content })).toEqual({
      ok: true,
      via: 'python',
      calls: [
        { name: 'filter_data', arguments: filter.arguments },
        { name: 'retrieve_data', arguments: { ...retrieve.arguments, distinct: false, limit: null } },
      ],
    });
  });

  test('a call of the wrong shape is kept as it is, for the format check', () => {
    expect(parseReply({ content: '[{"tool": "filter_data"}]' })).toEqual({
      ok: true,
      calls: [{ tool: 'filter_data' }],
      via: 'json',
    });
  });

  test.each([
    ['empty', ''],
    ['prose only', 'The answer is 42 schools in Oslo.'],
    ['broken JSON', '[{"name": "filter_data", "arguments": {'],
    ['a number', '42'],
  ])('nothing readable (%s) is a failure, not a throw', (_, content) => {
    expect(parseReply({ content })).toMatchObject({ ok: false });
  });
});

describe('Python literals are read, never evaluated', () => {
  test('literals', () => {
    expect(readPythonLiteral(`{'a': (1, 2.5, -3e2), "b": [True, False, None], 'c': 'it\\'s\\n'}`)).toEqual({
      a: [1, 2.5, -300],
      b: [true, false, null],
      c: "it's\n",
    });
  });

  test.each(['__import__("os").system("ls")', 'open("x")', '[1, 2', "{'a' 1}", '1 + 1'])('%s is refused', (text) => {
    expect(() => readPythonLiteral(text)).toThrow(PythonSyntaxError);
  });

  test('a call with a computed argument is refused', () => {
    expect(() => readCallExpressions('f(a=g(1))')).toThrow(PythonSyntaxError);
    expect(readCallExpressions('f()')).toEqual([{ name: 'f', arguments: {} }]);
  });
});
