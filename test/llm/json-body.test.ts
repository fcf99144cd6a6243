import { jest } from '@jest/globals';
import { mulberry32 } from '../../core/random.js';
import { JsonBodyEncoder } from '../../generators/llm/json-body.js';

/** Request bodies with long strings: the bytes are JSON.stringify's text encoded by Buffer.from, whatever the body holds. */

const random = mulberry32(35);
const CHARS = ['a', '"', '\\', 'é', '\u2028', '😀', '\ud800', '\udc00', '{', ' ', '\u0000', '\n'];
const text = (n: number) => Array.from({ length: n }, () => CHARS[Math.floor(random() * CHARS.length)]).join('');
const STAND_IN = '\u0000nl2api long string\u0000';

const expected = (body: object) => Buffer.from(JSON.stringify(body), 'utf8');

test('every body encodes as JSON.stringify and Buffer.from do', () => {
  const encoder = new JsonBodyEncoder(2);
  // Three system prompts (one ends on the first half of a surrogate pair), bodies interleaved as requests are.
  const prompts = [text(40_000), `${text(30_000)}\ud83d`, text(50_000)];
  for (let i = 0; i < 60; i++) {
    const prompt = prompts[Math.floor(random() * prompts.length)];
    const body = {
      model: 'm',
      temperature: 0,
      messages: [
        { role: 'system', content: prompt },
        { role: 'user', content: `\ude00${text(1 + Math.floor(random() * 300))}`, skipped: undefined },
      ],
      tools: random() < 0.5 ? [{ type: 'function', function: { name: 'f', description: prompt } }] : undefined,
    };
    expect(encoder.encode(body).equals(expected(body))).toBe(true);
  }
});

test('what looks like the stand-in, a key or a value, and what JSON writes its own way are written as JSON.stringify writes them', () => {
  const encoder = new JsonBodyEncoder();
  const long = text(20_000);
  const bodies: object[] = [
    { [STAND_IN]: long },
    { a: STAND_IN, b: long, c: [STAND_IN, long] },
    { when: new Date(0), long, missing: () => 1, n: NaN, nested: { toJSON: () => long } },
    [long, long, 'short', null],
    { only: 'short' },
  ];
  for (const body of bodies) expect(encoder.encode(body).equals(expected(body))).toBe(true);
});

test('a long string is written to JSON once, however many bodies carry it', () => {
  const encoder = new JsonBodyEncoder();
  const prompt = text(40_000);
  encoder.encode({ messages: [{ content: prompt }, { content: 'first question' }] });
  const stringify = jest.spyOn(JSON, 'stringify');
  try {
    const body = { messages: [{ content: prompt }, { content: 'second question' }] };
    encoder.encode(body);
    expect(stringify.mock.calls.filter(([value]) => value === prompt)).toEqual([]);
  } finally {
    stringify.mockRestore();
  }
});
