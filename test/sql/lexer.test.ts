import { tokenize, type Token } from '../../runtime/sql/lexer.js';

const kinds = (sql: string) => tokenize(sql).map((t: Token) => [t.kind, t.text]);

describe('SQL lexer', () => {
  test('is lossless: the tokens concatenate back to the input, positions included', () => {
    const inputs = [
      "SELECT \"a b\", `c`, [d e] FROM t WHERE x = 'it''s' -- note\n AND y <> .5e3 /* open",
      'SELECT café, 名前, x١ FROM «t»\u00a0WHERE\u3000a = :name AND b = ?12 AND c = @v AND d = $w',
      "'unterminated",
      '',
    ];
    for (const sql of inputs) {
      const tokens = tokenize(sql);
      expect(tokens.map((t) => t.text).join('')).toBe(sql);
      tokens.forEach((t) => expect(sql.slice(t.start, t.end)).toBe(t.text));
    }
  });

  test('reads words, numbers, parameters and operators as SQLite does', () => {
    expect(kinds('a_1$b<=0x1F||.5e-3')).toEqual([
      ['word', 'a_1$b'],
      ['op', '<='],
      ['number', '0x1F'],
      ['op', '||'],
      ['number', '.5e-3'],
    ]);
    expect(kinds(':p ?3 @q $r ?')).toEqual([
      ['param', ':p'],
      ['space', ' '],
      ['param', '?3'],
      ['space', ' '],
      ['param', '@q'],
      ['space', ' '],
      ['param', '$r'],
      ['space', ' '],
      ['param', '?'],
    ]);
    // `$` continues a word but does not start one; `:` without a name is punctuation.
    expect(kinds('$1 :')).toEqual([
      ['punct', '$'],
      ['number', '1'],
      ['space', ' '],
      ['punct', ':'],
    ]);
  });

  test('Unicode letters and digits make words; Unicode spaces separate them', () => {
    expect(kinds('café\u00a0名前 x١\u3000ß')).toEqual([
      ['word', 'café'],
      ['space', '\u00a0'],
      ['word', '名前'],
      ['space', ' '],
      ['word', 'x١'],
      ['space', '\u3000'],
      ['word', 'ß'],
    ]);
  });

  test('strings, quoted names and comments run to their end, or to the input end marked unterminated', () => {
    expect(tokenize('\'a\'\'b\' "c""d" [e]] `f``g`').filter((t) => t.kind !== 'space')).toEqual([
      { kind: 'string', text: "'a''b'", start: 0, end: 6 },
      { kind: 'dquote', text: '"c""d"', start: 7, end: 13 },
      { kind: 'quoted', text: '[e]', start: 14, end: 17 },
      { kind: 'punct', text: ']', start: 17, end: 18 },
      { kind: 'quoted', text: '`f``g`', start: 19, end: 25 },
    ]);
    expect(tokenize("x 'open")).toContainEqual({ kind: 'string', text: "'open", start: 2, end: 7, unterminated: true });
    expect(tokenize('x /* open')).toContainEqual({
      kind: 'comment',
      text: '/* open',
      start: 2,
      end: 9,
      unterminated: true,
    });
    expect(kinds('a -- b\nc')).toEqual([
      ['word', 'a'],
      ['space', ' '],
      ['comment', '-- b'],
      ['space', '\n'],
      ['word', 'c'],
    ]);
  });
});
