import { answerInWords, chatExample, ChatExampleSchema } from '../../export/openai-chat.js';

/** A sample as an OpenAI chat fine-tuning line: built from real calls and outputs, valid against the format's schema. */

const input = {
  question: 'List the titles of Mystery books that cost less than 10 dollars.',
  evidence: "Mystery books refers to genre = 'Mystery'",
  startLabels: ['starting_table_var'],
  calls: [
    {
      name: 'filter_data',
      arguments: {
        data_source: '$starting_table_var$',
        key_name: 'book_genre',
        condition: 'equal_to',
        value: 'Mystery',
      },
      label: 'FILTER_1',
    },
    { name: 'retrieve_data', arguments: { data_source: '$FILTER_1$', key_name: 'book_title' }, label: 'SELECT_1' },
  ],
  get plan() {
    return this.calls;
  },
  outputs: [{ columns: ['book_title'], rows: [['Winter Machine']] }, ['Winter Machine']],
  tools: [
    {
      type: 'function' as const,
      function: { name: 'filter_data', description: 'Filter rows', parameters: { type: 'object' } },
    },
    {
      type: 'function' as const,
      function: { name: 'retrieve_data', description: 'Read a column', parameters: { type: 'object' } },
    },
  ],
  keys: ['book_title: the title of the book', 'book_genre: its genre'],
  answer: answerInWords([['Winter Machine']]),
};

test('one assistant call and one tool result per call, ids are the labels, a final answer in words', () => {
  const example = chatExample(input);
  expect(ChatExampleSchema.parse(example)).toEqual(example);
  expect(example.messages.map((m) => m.role)).toEqual([
    'system',
    'user',
    'assistant',
    'tool',
    'assistant',
    'tool',
    'assistant',
  ]);
  expect(example.messages[2]).toEqual({
    role: 'assistant',
    content: null,
    tool_calls: [
      {
        id: 'FILTER_1',
        type: 'function',
        function: { name: 'filter_data', arguments: JSON.stringify(input.calls[0].arguments) },
      },
    ],
  });
  expect(example.messages[5]).toEqual({ role: 'tool', tool_call_id: 'SELECT_1', content: '["Winter Machine"]' });
  expect(example.messages[6]).toEqual({ role: 'assistant', content: 'The answer is Winter Machine.' });
  expect(example.messages[0].content).toMatch(/"\$starting_table_var\$"/);
});

test('the schema refuses a tool message that answers no call, and a call never answered', () => {
  const example = chatExample(input);
  const orphan = { ...example, messages: [...example.messages.slice(0, 2), example.messages[3]] };
  expect(ChatExampleSchema.safeParse(orphan).success).toBe(false);
  const unanswered = { ...example, messages: [...example.messages.slice(0, 3), example.messages[6]] };
  expect(ChatExampleSchema.safeParse(unanswered).success).toBe(false);
});

test('answers in words: empty, one value, a list, rows, and long answers cut with a count', () => {
  expect(answerInWords([])).toBe('There is no such data: the answer is empty.');
  expect(answerInWords([[null]])).toBe('The answer is none.');
  expect(answerInWords([['a'], ['b']])).toBe('The answer has 2 rows: a; b.');
  expect(answerInWords([[1, 'x']])).toBe('The answer has 1 row: (1, x).');
  const many = Array.from({ length: 25 }, (_, i) => [i]);
  expect(answerInWords(many)).toMatch(/^The answer has 25 rows: 0; 1; .*; 19, and 5 more\.$/);
});
