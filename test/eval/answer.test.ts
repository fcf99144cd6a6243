import type { GoldResult, ToolCall, ToolOutput } from '../../core/model.js';
import { judgeAnswer, type ExecutedCall } from '../../eval/answer.js';
import { unconsumedLabels } from '../../eval/answer-labels.js';

/** Which outputs are a model's answer when it names none, and an answer naming no call that succeeded. */

const call = (label: string, args: Record<string, unknown> = {}): ToolCall => ({
  name: 'tool',
  label,
  arguments: args,
});
const succeeded = (label: string): ExecutedCall => ({
  call: call(label),
  result: { ok: true, output: { rows: [] } as unknown as ToolOutput },
});
const GOLD = {} as GoldResult;

test('the answer is the outputs no later call consumed, in call order', () => {
  const calls = [
    call('A'),
    call('B', { data_source: '$A$' }),
    call('C', { filters: [{ value: '$B.name$' }] }),
    call('D'),
  ];
  expect(unconsumedLabels(calls)).toEqual(['C', 'D']);
});

test('an answer that names a label no successful call has is no answer', async () => {
  await expect(judgeAnswer([succeeded('A')], GOLD, { answer: undefined }, ['Z'])).resolves.toEqual({
    ok: false,
    category: 'no_answer',
    message: 'the answer names "Z", no call of that label succeeded',
  });
});

test('a tool sequence whose answer was not named is judged on its unconsumed outputs, which the episode must have computed', async () => {
  await expect(judgeAnswer([succeeded('A')], GOLD, { answer: undefined })).rejects.toThrow(
    'a tool-sequence episode computes its answer',
  );
});
