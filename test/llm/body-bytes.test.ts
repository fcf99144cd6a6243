import { jest } from '@jest/globals';
import { mulberry32 } from '../../core/random.js';
import { SharedStartEncoder } from '../../generators/llm/body-bytes.js';

/** Request bodies with long shared starts: the bytes are Buffer.from's, whatever the bodies share and wherever they part. */

const random = mulberry32(35);
const CHARS = ['a', '"', '\\', 'é', '\u2028', '😀', '\ud800', '\udc00', '{', ' '];
const text = (n: number) => Array.from({ length: n }, () => CHARS[Math.floor(random() * CHARS.length)]).join('');

test('every body encodes as Buffer.from encodes it', () => {
  const encoder = new SharedStartEncoder(2);
  // Three system prompts (one ends on the first half of a surrogate pair), bodies interleaved as requests are.
  const prompts = [text(40_000), `${text(30_000)}\ud83d`, text(50_000)];
  const bodies: string[] = [];
  for (let i = 0; i < 60; i++) {
    const prompt = prompts[Math.floor(random() * prompts.length)];
    // Questions that open alike now and then: the start all of a prompt's bodies share is shorter than two's.
    const question = random() < 0.3 ? `Question: What ${text(20)}` : text(1 + Math.floor(random() * 300));
    bodies.push(`{"messages":[{"content":"${prompt}"},{"content":"\ude00${question}"}]}`);
  }
  bodies.push(prompts[0], prompts[0].slice(0, 20_000), '', 'short');
  for (const body of bodies) expect(encoder.encode(body).equals(Buffer.from(body, 'utf8'))).toBe(true);
});

test('a start shared up to the first half of a surrogate pair is cut before it', () => {
  const encoder = new SharedStartEncoder();
  const prompt = `${text(20_000)}\ud83d`;
  for (const low of ['\ude00', '\ude01', '\ude00', '\ude02']) {
    const body = `${prompt}${low}${text(50)}`;
    expect(encoder.encode(body).equals(Buffer.from(body, 'utf8'))).toBe(true);
  }
});

test('a body of a known start encodes only what follows it', () => {
  const encoder = new SharedStartEncoder();
  const prompt = text(40_000);
  encoder.encode(`${prompt}first question`);
  encoder.encode(`${prompt}second question`);
  const from = jest.spyOn(Buffer, 'from');
  const body = `${prompt}third question`;
  try {
    expect(encoder.encode(body).equals(Buffer.from(body, 'utf8'))).toBe(true);
    // Its own encoding (the first call) was of the question alone; the second is the check's.
    expect((from.mock.calls[0][0] as string).length).toBeLessThan(100);
  } finally {
    from.mockRestore();
  }
});
