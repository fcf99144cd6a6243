import { mulberry32 } from '../../core/random.js';
import { countTokens, piecesOf, TokenCounter, tokenStats, TOKENS_PER_PART } from '../../export/tokens.js';

/** Token statistics with a tokenizer that ships its vocabulary (no network). */

test('counts tokens with the bundled vocabularies', () => {
  expect(countTokens('hello world')).toBe(2);
  expect(countTokens('hello world', 'cl100k_base')).toBe(2);
  expect(countTokens('')).toBe(0);
});

test("an example is its tool list and its messages, each a part with the template's markers; its tool tokens apart", () => {
  const counter = new TokenCounter();
  const p = TOKENS_PER_PART;
  // Tools of 2 and 1 tokens, messages of 4 and 0.
  expect(
    counter.count({ tools: ['hello world', 'hello'], messages: [['hello world', ' hello', ' world'], []] }),
  ).toEqual({
    total: 3 + p + 4 + p + 0 + p,
    tools: 3 + p,
  });
  // No tools: no tool part.
  expect(counter.count({ tools: [], messages: [['hello']] })).toEqual({ total: 1 + p, tools: 0 });
});

test("statistics: total, mean, nearest-rank p50 and p95, max, and the tool specs' share of the tokens", () => {
  const examples = [
    { total: 10, tools: 5 },
    { total: 20, tools: 10 },
    { total: 30, tools: 0 },
    { total: 40, tools: 30 },
  ];
  expect(tokenStats('o200k_base', examples)).toEqual({
    encoding: 'o200k_base',
    examples: 4,
    total: 100,
    mean: 25,
    p50: 20,
    p95: 40,
    max: 40,
    toolShare: 0.45,
  });
  expect(tokenStats('cl100k_base', [])).toEqual({
    encoding: 'cl100k_base',
    examples: 0,
    total: 0,
    mean: 0,
    p50: 0,
    p95: 0,
    max: 0,
    toolShare: 0,
  });
});

describe('a text is counted as its pieces, exactly', () => {
  const encodings = ['o200k_base', 'cl100k_base'] as const;
  // Seeded texts mixing what tool specs and messages hold: words, key lines after real and
  // escaped line breaks, punctuation runs, digits, contractions, runs of spaces, other scripts.
  const atoms = [
    'word',
    'Key',
    'cards_id',
    'legalities_status:',
    ' The',
    ' name',
    "it's",
    " don't",
    '\n',
    '\\n',
    '\\n\\n',
    '  ',
    '   ',
    '\t',
    '"',
    '","',
    ': ',
    '(K-12)',
    '12345',
    '3.14',
    'é',
    ' Ünïcödé',
    ' 漢字',
    '—',
    '∞',
    ' ?',
    '{"type":"string","enum":["a","b"]}',
    '\r\n',
    ' 1',
    'x',
    ' .',
    '/',
    ' //',
    "'S",
    "'ll",
    '},{"',
    '"},{"',
    '],[',
    "'},{",
    'null',
    '7',
    '":"',
    '😀',
    ' 𝔘x',
    '𝔘',
    // Quotes after letters, digits and what a letter chunk may end with.
    'A"',
    '1234"',
    '"x"',
    '\'s"',
    'é"',
    'e\u0301"',
    '_"',
  ];
  const texts = Array.from({ length: 1000 }, (_, i) => {
    const random = mulberry32(i + 1);
    return Array.from({ length: 5 + Math.floor(random() * 60) }, () => atoms[Math.floor(random() * atoms.length)]).join(
      '',
    );
  });
  const spec = JSON.stringify({
    type: 'function',
    function: {
      name: 'filter_data',
      description:
        'Filters rows.\nKeys:\ncards_id: unique id\ncards_artist: The name of the artist (opens new window).\n* : rows',
      parameters: { type: 'object', properties: { key_name: { type: 'string', enum: ['cards_id', 'cards_artist'] } } },
    },
  });

  // A tool's output: rows of values of every kind (as a conversation's tool turn holds them).
  const rows = JSON.stringify({
    first: Array.from({ length: 30 }, (_, i) => ({
      id: i,
      name: i % 3 ? `Name ${i}` : null,
      score: i / 7,
      tags: [`t${i}`, 'x y'],
      note: i % 4 ? "it's fine" : '',
      é: 'Ünï',
    })),
    more: true,
  });

  test.each(encodings)('%s: the pieces give the text back and its count', (encoding) => {
    for (const text of [...texts, spec, rows, '', ' ', '\\n x', 'a\\n b']) {
      const pieces = piecesOf(text);
      expect(pieces.join('')).toBe(text);
      expect(pieces.reduce((sum, piece) => sum + countTokens(piece, encoding), 0)).toBe(countTokens(text, encoding));
    }
  });

  test('a tool spec is cut at its key lines and after its JSON keys and words (so that other specs and formats reuse its pieces)', () => {
    const pieces = piecesOf(spec);
    // After each key's name in its description: `cards_id:| unique id\ncards_artist:| The name …`.
    expect(pieces).toContain(' unique id\\ncards_artist:');
    expect(pieces.find((piece) => piece.startsWith(' The name of the artist'))).toBeDefined();
    // Before the quote that ends a key or a value: each enum item, each parameter name.
    expect(pieces).toContain('","cards_artist');
    expect(pieces).toContain('":{"key_name');
    // A spec listing fewer keys, or the same function in another wrapper, is made of the same pieces but a few.
    const known = new Set(pieces);
    const narrowed = spec.replace('"enum":["cards_id","cards_artist"]', '"enum":["cards_artist"]');
    expect(piecesOf(narrowed).filter((piece) => !known.has(piece))).toEqual(['":["cards_artist']);
  });
});
