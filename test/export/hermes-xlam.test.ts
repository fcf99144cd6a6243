import { hermesExample, HermesExampleSchema } from '../../export/hermes.js';
import { xlamExample, XlamExampleSchema } from '../../export/xlam.js';
import { answerInWords } from '../../export/openai-chat.js';

/** A sample in the Hermes (ShareGPT + <tool_call>) and xLAM/APIGen formats, valid against each format's schema. */

const tools = [
  {
    type: 'function' as const,
    function: {
      name: 'filter_data',
      description: 'Keep the rows whose key meets a condition',
      parameters: {
        type: 'object',
        properties: {
          data_source: { type: 'string', description: 'The data to filter' },
          condition: { type: 'string', enum: ['equal_to', 'less_than'], description: 'How to compare' },
          value: { type: ['string', 'number', 'null'], description: 'The value' },
          keys: { type: 'array', items: { type: 'string' }, description: 'Keys' },
        },
        required: ['data_source', 'condition'],
      },
    },
  },
];
const calls = [
  {
    name: 'filter_data',
    arguments: { data_source: '$starting_table_var$', condition: 'equal_to', value: 'Mystery' },
    label: 'FILTER_1',
  },
];
const input = {
  question: 'Which books are mysteries?',
  evidence: '',
  startLabels: ['starting_table_var'],
  calls,
  plan: calls,
  outputs: [{ columns: ['book_title'], rows: [['Winter Machine']] }],
  tools,
  keys: ['book_title: the title of the book'],
  answer: answerInWords([['Winter Machine']]),
};

test('Hermes: tools in the system turn, a <tool_call> then its <tool_response> per call, the answer last', () => {
  const example = hermesExample(input);
  expect(HermesExampleSchema.parse(example)).toEqual(example);
  expect(example.conversations.map((t) => t.from)).toEqual(['system', 'human', 'gpt', 'tool', 'gpt']);
  expect(example.conversations[2].value).toBe(`<tool_call>\n${JSON.stringify({ ...calls[0] })}\n</tool_call>`);
  expect(example.conversations[3].value).toBe(
    '<tool_response>\n{"columns":["book_title"],"rows":[["Winter Machine"]]}\n</tool_response>',
  );
  expect(example.conversations[4].value).toBe('The answer is Winter Machine.');
  // A call left without its response, or a tool turn out of place, is refused.
  const broken = { conversations: [...example.conversations.slice(0, 3), example.conversations[4]] };
  expect(HermesExampleSchema.safeParse(broken).success).toBe(false);
});

test('xLAM: query, tools and answers as JSON strings, parameters in APIGen shape', () => {
  const example = xlamExample(7, input.question, calls, tools);
  expect(XlamExampleSchema.parse(example)).toEqual(example);
  expect(JSON.parse(example.tools)).toEqual([
    {
      name: 'filter_data',
      description: 'Keep the rows whose key meets a condition',
      parameters: {
        data_source: { type: 'str', description: 'The data to filter' },
        condition: { type: 'str', description: 'How to compare. One of: "equal_to", "less_than".' },
        value: { type: 'Union[str, float], optional', description: 'The value' },
        keys: { type: 'List[str]', description: 'Keys' },
      },
    },
  ]);
  expect(JSON.parse(example.answers)).toEqual(calls);
  expect(XlamExampleSchema.safeParse({ ...example, answers: '[{"arguments": {}}]' }).success).toBe(false);
});
