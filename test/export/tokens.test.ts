import { mulberry32 } from '../../core/random.js';
import { countTokens, piecesOf, TokenCounter, TOKENS_PER_PART } from '../../export/tokens.js';

/** Token statistics with a tokenizer that ships its vocabulary (no network). */

test('counts tokens with the bundled vocabularies', () => {
  expect(countTokens('hello world')).toBe(2);
  expect(countTokens('hello world', 'cl100k_base')).toBe(2);
  expect(countTokens('')).toBe(0);
});

test('per-export statistics: an example is its parts plus the template per part; total, mean, nearest-rank p50 and p95, max', () => {
  const counter = new TokenCounter();
  // Parts of 2, 1, 4 and 0 tokens, each with the template's markers.
  counter.add([['hello world']]);
  counter.add([['hello']]);
  counter.add([['hello world'], ['hello', ' world']]);
  counter.add([]);
  const p = TOKENS_PER_PART;
  expect(counter.stats()).toEqual({
    encoding: 'o200k_base',
    examples: 4,
    total: 7 + 4 * p,
    mean: (7 + 4 * p) / 4,
    p50: 1 + p,
    p95: 4 + 2 * p,
    max: 4 + 2 * p,
  });
  expect(new TokenCounter('cl100k_base').stats()).toMatchObject({
    encoding: 'cl100k_base',
    examples: 0,
    total: 0,
    p95: 0,
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

  test('a tool spec is cut at its key lines (so that a narrowed spec reuses its lines)', () => {
    // Cut after each key's name: `cards_id:| unique id\ncards_artist:| The name …`.
    const [, first, second, ...rest] = piecesOf(spec);
    expect(rest).toEqual([]);
    expect(first).toMatch(/^ unique id\\ncards_artist:$/);
    expect(second).toMatch(/^ The name of the artist/);
  });
});
