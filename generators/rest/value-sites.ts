import { COMPARISON_SPELLINGS, isWord, unquote, type Token } from '../../runtime/sql/lexer.js';

/**
 * Where a value (a literal, or a `:name` placeholder) sits in a SELECT, read off the token
 * stream: the clause it is in and the predicate it is an operand of (a comparison, an IN
 * list, a BETWEEN bound, a LIKE pattern), with the column on the predicate's other side.
 * The template synthesizer turns such literals into parameters; the format check uses the
 * same reading to check a placeholder's type against the column it is compared with.
 */

export type SiteOp =
  '=' | '!=' | '<' | '<=' | '>' | '>=' | 'IN' | 'NOT IN' | 'BETWEEN_LOW' | 'BETWEEN_HIGH' | 'LIKE' | 'NOT LIKE';

export type Clause = 'select' | 'from' | 'on' | 'where' | 'group' | 'having' | 'order' | 'limit' | 'call' | 'other';

export interface ColumnRef {
  qualifier: string | null;
  name: string;
}

export interface ValueSite {
  /** Token indices (into the full token list) of the value: a literal with its sign, or a placeholder. */
  first: number;
  last: number;
  op: SiteOp;
  clause: Clause;
  /** Columns named by the other operand, most specific first (empty when it names none). */
  columns: ColumnRef[];
  /** The other operand is exactly a column, so its affinity applies to the value. */
  bare: boolean;
  /** The function wrapping the other operand (`STRFTIME`, `COUNT`), upper-cased; null when none. */
  fn: string | null;
  /** The first argument of that function when it is a string (`'%Y'`): names the part compared. */
  fnFormat: string | null;
}

/** Words that are never column names. */
const KEYWORDS = new Set(
  (
    'SELECT FROM WHERE AND OR NOT NULL IS IN LIKE GLOB BETWEEN CASE WHEN THEN ELSE END AS ON JOIN INNER LEFT RIGHT ' +
    'FULL OUTER CROSS NATURAL USING GROUP BY HAVING ORDER ASC DESC LIMIT OFFSET UNION ALL INTERSECT EXCEPT DISTINCT ' +
    'EXISTS CAST COLLATE ESCAPE TRUE FALSE OVER PARTITION WITH REGEXP MATCH NOCASE WINDOW VALUES'
  ).split(' '),
);
/** Words after which `(` opens a group or a subquery rather than a call's arguments. */
const NON_CALL = new Set(
  'AND OR NOT WHERE ON HAVING WHEN THEN ELSE IN EXISTS AS FROM JOIN BETWEEN SELECT CASE BY LIKE GLOB IS USING VALUES ALL DISTINCT UNION INTERSECT EXCEPT'.split(
    ' ',
  ),
);
const CLAUSE_WORDS: Record<string, Clause> = {
  SELECT: 'select',
  FROM: 'from',
  JOIN: 'from',
  ON: 'on',
  WHERE: 'where',
  GROUP: 'group',
  HAVING: 'having',
  ORDER: 'order',
  LIMIT: 'limit',
  OFFSET: 'limit',
  UNION: 'other',
  INTERSECT: 'other',
  EXCEPT: 'other',
  WINDOW: 'other',
};
const COMPARISONS: Record<string, SiteOp> = COMPARISON_SPELLINGS;
const MIRROR: Record<string, SiteOp> = { '=': '=', '!=': '!=', '<': '>', '<=': '>=', '>': '<', '>=': '<=' };
/** Tokens that may precede an operand that starts a predicate. */
const BEFORE_WORDS = new Set(['WHERE', 'AND', 'OR', 'NOT', 'ON', 'HAVING', 'WHEN']);
/** Tokens that may follow an operand that ends a predicate. */
const AFTER_WORDS = new Set([
  'AND',
  'OR',
  'GROUP',
  'ORDER',
  'LIMIT',
  'HAVING',
  'UNION',
  'INTERSECT',
  'EXCEPT',
  'THEN',
  'ELSE',
  'END',
  'WHEN',
  'WINDOW',
  'COLLATE',
  'JOIN',
  'INNER',
  'LEFT',
  'RIGHT',
  'CROSS',
  'NATURAL',
  'FULL',
  'WHERE',
]);

interface Sig {
  token: Token;
  /** Index in the full token list. */
  index: number;
}

export function findValueSites(tokens: readonly Token[]): ValueSite[] {
  const sig: Sig[] = tokens.flatMap((token, index) =>
    token.kind === 'space' || token.kind === 'comment' ? [] : [{ token, index }],
  );
  return new SiteReader(sig, clauses(sig)).read();
}

/** The clause each significant token is in (a call's arguments are `call`). */
function clauses(sig: Sig[]): Clause[] {
  const frames: Clause[] = ['other'];
  return sig.map(({ token }, k) => {
    const upper = token.kind === 'word' ? token.text.toUpperCase() : '';
    if (token.text === '(' && token.kind === 'punct') {
      const prev = sig[k - 1]?.token;
      const opensQuery = isWord(sig[k + 1]?.token, 'SELECT', 'WITH', 'VALUES');
      const isCall = prev && (prev.kind === 'word' || prev.kind === 'quoted') && !NON_CALL.has(prev.text.toUpperCase());
      frames.push(opensQuery ? 'select' : isCall ? 'call' : frames[frames.length - 1]);
      return frames[frames.length - 1];
    }
    if (token.text === ')' && token.kind === 'punct') {
      const clause = frames[frames.length - 1];
      if (frames.length > 1) frames.pop();
      return clause;
    }
    if (upper in CLAUSE_WORDS && frames[frames.length - 1] !== 'call') frames[frames.length - 1] = CLAUSE_WORDS[upper];
    return frames[frames.length - 1];
  });
}

function isPunct(sig: Sig | undefined, text: string): boolean {
  return sig?.token.kind === 'punct' && sig.token.text === text;
}

function isIdentifier(sig: Sig | undefined): boolean {
  if (!sig) return false;
  const t = sig.token;
  return t.kind === 'quoted' || t.kind === 'dquote' || (t.kind === 'word' && !KEYWORDS.has(t.text.toUpperCase()));
}

class SiteReader {
  constructor(
    private readonly sig: Sig[],
    private readonly clause: Clause[],
  ) {}

  read(): ValueSite[] {
    const sites: ValueSite[] = [];
    const taken = new Set<number>();
    const add = (site: ValueSite | null, k: number) => {
      if (site && !taken.has(k)) {
        taken.add(k);
        sites.push(site);
      }
    };
    for (let k = 0; k < this.sig.length; k++) {
      const t = this.sig[k].token;
      if (isWord(t, 'BETWEEN')) for (const [site, at] of this.between(k)) add(site, at);
      if (isWord(t, 'IN') && isPunct(this.sig[k + 1], '(')) for (const [site, at] of this.inList(k)) add(site, at);
      const end = this.valueEnd(k);
      if (end !== null && !taken.has(k)) add(this.comparisonOrLike(k, end), k);
    }
    return sites.sort((a, b) => a.first - b.first);
  }

  /** A value starting at significant index k: its last index, else null. */
  private valueEnd(k: number): number | null {
    const t = this.sig[k]?.token;
    if (!t) return null;
    if (t.kind === 'string' || t.kind === 'number' || t.kind === 'param') return k;
    const next = this.sig[k + 1]?.token;
    if (t.kind === 'op' && (t.text === '-' || t.text === '+') && next?.kind === 'number' && this.unaryPosition(k))
      return k + 1;
    return null;
  }

  /** A sign at k is unary when nothing that ends an operand precedes it. */
  private unaryPosition(k: number): boolean {
    const prev = this.sig[k - 1]?.token;
    if (!prev) return true;
    if (prev.kind === 'op') return true;
    if (prev.kind === 'punct') return prev.text === '(' || prev.text === ',';
    return prev.kind === 'word' && KEYWORDS.has(prev.text.toUpperCase());
  }

  private site(first: number, last: number, op: SiteOp, operand: Operand): ValueSite {
    return {
      first: this.sig[first].index,
      last: this.sig[last].index,
      op,
      clause: this.clause[first],
      columns: operand.columns,
      bare: operand.bare,
      fn: operand.fn,
      fnFormat: operand.fnFormat,
    };
  }

  private endsPredicate(k: number): boolean {
    const t = this.sig[k]?.token;
    if (!t) return true;
    if (t.kind === 'punct') return t.text === ')' || t.text === ';' || t.text === ',';
    return t.kind === 'word' && AFTER_WORDS.has(t.text.toUpperCase());
  }

  private startsPredicate(k: number): boolean {
    const t = this.sig[k]?.token;
    if (!t) return true;
    if (t.kind === 'punct') return t.text === '(' || t.text === ',';
    return t.kind === 'word' && BEFORE_WORDS.has(t.text.toUpperCase());
  }

  private comparisonOrLike(k: number, end: number): ValueSite | null {
    const prev = this.sig[k - 1]?.token;
    const next = this.sig[end + 1]?.token;
    if (prev?.kind === 'op' && prev.text in COMPARISONS && this.endsPredicate(end + 1)) {
      return this.site(k, end, COMPARISONS[prev.text], this.operandBefore(k - 2));
    }
    if (next?.kind === 'op' && next.text in COMPARISONS && this.startsPredicate(k - 1)) {
      return this.site(k, end, MIRROR[COMPARISONS[next.text]], this.operandAfter(end + 2));
    }
    if (isWord(prev, 'LIKE', 'GLOB') && this.endsPredicate(end + 1) && !isWord(next, 'ESCAPE')) {
      const not = isWord(this.sig[k - 2]?.token, 'NOT');
      const op: SiteOp = not ? 'NOT LIKE' : 'LIKE';
      return prev.text.toUpperCase() === 'LIKE' ? this.site(k, end, op, this.operandBefore(k - (not ? 3 : 2))) : null;
    }
    return null;
  }

  /** `x [NOT] IN (v, v, ...)` with every element a value: one site per element. */
  private inList(k: number): [ValueSite, number][] {
    const not = isWord(this.sig[k - 1]?.token, 'NOT');
    const operand = this.operandBefore(k - (not ? 2 : 1));
    const sites: [ValueSite, number][] = [];
    let j = k + 2;
    for (;;) {
      const end = this.valueEnd(j);
      if (end === null) return [];
      sites.push([this.site(j, end, not ? 'NOT IN' : 'IN', operand), j]);
      if (isPunct(this.sig[end + 1], ')')) return sites;
      if (!isPunct(this.sig[end + 1], ',')) return [];
      j = end + 2;
    }
  }

  /** `x [NOT] BETWEEN v AND v`: a site per bound that is a single value. */
  private between(k: number): [ValueSite, number][] {
    if (isWord(this.sig[k - 1]?.token, 'NOT')) return []; // NOT BETWEEN: bounds read inverted; keep literal
    const operand = this.operandBefore(k - 1);
    const lowEnd = this.valueEnd(k + 1);
    if (lowEnd === null || !isWord(this.sig[lowEnd + 1]?.token, 'AND')) return [];
    const sites: [ValueSite, number][] = [[this.site(k + 1, lowEnd, 'BETWEEN_LOW', operand), k + 1]];
    const highEnd = this.valueEnd(lowEnd + 2);
    if (highEnd !== null && this.endsPredicate(highEnd + 1))
      sites.push([this.site(lowEnd + 2, highEnd, 'BETWEEN_HIGH', operand), lowEnd + 2]);
    return sites;
  }

  /** The operand ending at significant index e. */
  private operandBefore(e: number): Operand {
    const t = this.sig[e];
    if (isIdentifier(t)) {
      const qualified = isPunct(this.sig[e - 1], '.') && isIdentifier(this.sig[e - 2]);
      const start = qualified ? e - 2 : e;
      const column = { qualifier: qualified ? unquote(this.sig[e - 2].token) : null, name: unquote(t.token) };
      return { columns: [column], bare: this.startsPredicate(start - 1), fn: null, fnFormat: null };
    }
    if (isPunct(t, ')')) {
      let depth = 0;
      for (let p = e; p >= 0; p--) {
        if (isPunct(this.sig[p], ')')) depth++;
        else if (isPunct(this.sig[p], '(') && --depth === 0) return this.callOperand(p, e);
      }
    }
    return NO_OPERAND;
  }

  /** The operand starting at significant index s. */
  private operandAfter(s: number): Operand {
    if (!isIdentifier(this.sig[s])) return NO_OPERAND;
    const qualified = isPunct(this.sig[s + 1], '.') && isIdentifier(this.sig[s + 2]);
    const end = qualified ? s + 2 : s;
    if (isPunct(this.sig[end + 1], '(')) return NO_OPERAND;
    const column = qualified
      ? { qualifier: unquote(this.sig[s].token), name: unquote(this.sig[s + 2].token) }
      : { qualifier: null, name: unquote(this.sig[s].token) };
    return { columns: [column], bare: this.endsPredicate(end + 1), fn: null, fnFormat: null };
  }

  /** `f(...)` spanning significant indices open-1 .. close: the columns it names. */
  private callOperand(open: number, close: number): Operand {
    const before = this.sig[open - 1];
    const fn =
      before && before.token.kind === 'word' && !NON_CALL.has(before.token.text.toUpperCase())
        ? before.token.text.toUpperCase()
        : null;
    const columns: ColumnRef[] = [];
    for (let j = open + 1; j < close; j++) {
      if (!isIdentifier(this.sig[j]) || isPunct(this.sig[j + 1], '(') || isPunct(this.sig[j + 1], '.')) continue;
      const qualified = isPunct(this.sig[j - 1], '.') && isIdentifier(this.sig[j - 2]);
      columns.push({ qualifier: qualified ? unquote(this.sig[j - 2].token) : null, name: unquote(this.sig[j].token) });
    }
    const firstArg = this.sig[open + 1]?.token;
    return { columns, bare: false, fn, fnFormat: firstArg?.kind === 'string' ? unquote(firstArg) : null };
  }
}

interface Operand {
  columns: ColumnRef[];
  bare: boolean;
  fn: string | null;
  fnFormat: string | null;
}

const NO_OPERAND: Operand = { columns: [], bare: false, fn: null, fnFormat: null };
