/**
 * A reader for what models write when asked for tool calls in Python style: literals (numbers,
 * '…' and "…" strings, True/False/None, lists, tuples, dicts) and call expressions
 * `name(a=1, b="x")`, alone or in a list. Read as data only, never evaluated: a value is a
 * literal or it is an error.
 */

export interface CallExpression {
  name: string;
  arguments: Record<string, unknown>;
}

export class PythonSyntaxError extends Error {
  override name = 'PythonSyntaxError';
}

/** One literal, the whole text. */
export function readPythonLiteral(text: string): unknown {
  const reader = new Reader(text);
  const value = reader.literal();
  reader.end();
  return value;
}

/** `f(a=1)`, or `[f(a=1), g(b=[2])]`: the whole text. */
export function readCallExpressions(text: string): CallExpression[] {
  const reader = new Reader(text);
  const calls = reader.peek() === '[' ? reader.sequence('[', ']', () => reader.call()) : [reader.call()];
  reader.end();
  return calls;
}

class Reader {
  private i = 0;
  constructor(private readonly text: string) {}

  peek(): string {
    this.skipSpace();
    return this.text[this.i] ?? '';
  }

  end(): void {
    if (this.peek() !== '') this.fail('unexpected text after the value');
  }

  call(): CallExpression {
    const name = this.identifier();
    const args: Record<string, unknown> = {};
    this.sequence('(', ')', () => {
      const key = this.identifier();
      this.expect('=');
      args[key] = this.literal();
    });
    return { name, arguments: args };
  }

  literal(): unknown {
    const c = this.peek();
    if (c === '[') return this.sequence('[', ']', () => this.literal());
    if (c === '(') return this.sequence('(', ')', () => this.literal());
    if (c === '{') {
      const entries: [string, unknown][] = [];
      this.sequence('{', '}', () => {
        const key = this.literal();
        if (typeof key !== 'string' && typeof key !== 'number') this.fail('a dict key must be a string or a number');
        this.expect(':');
        entries.push([String(key), this.literal()]);
      });
      return Object.fromEntries(entries);
    }
    if (c === '"' || c === "'") return this.string();
    if (/[-+\d.]/.test(c)) return this.number();
    const word = this.identifier();
    const constants: Record<string, unknown> = {
      True: true,
      False: false,
      None: null,
      true: true,
      false: false,
      null: null,
    };
    if (word in constants) return constants[word];
    return this.fail(`"${word}" is not a literal`);
  }

  /** `open item (, item)* ,? close`, the items read by `item`. */
  sequence<T>(open: string, close: string, item: () => T): T[] {
    this.expect(open);
    const items: T[] = [];
    while (this.peek() !== close) {
      items.push(item());
      if (this.peek() === ',') this.i++;
      else if (this.peek() !== close) this.fail(`expected "," or "${close}"`);
    }
    this.i++;
    return items;
  }

  private identifier(): string {
    this.skipSpace();
    const match = /^[A-Za-z_][A-Za-z0-9_.]*/.exec(this.text.slice(this.i));
    if (!match) return this.fail('expected a name');
    this.i += match[0].length;
    return match[0];
  }

  private number(): number {
    const match = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?/.exec(this.text.slice(this.i));
    if (!match) return this.fail('expected a number');
    this.i += match[0].length;
    return Number(match[0]);
  }

  private string(): string {
    const quote = this.text[this.i++];
    let out = '';
    for (;;) {
      const c = this.text[this.i++];
      if (c === undefined) return this.fail('unterminated string');
      if (c === quote) return out;
      if (c !== '\\') {
        out += c;
        continue;
      }
      const escaped = this.text[this.i++];
      const simple: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"', '0': '\0' };
      if (escaped in simple) out += simple[escaped];
      else if (escaped === 'u' || escaped === 'x') {
        const width = escaped === 'u' ? 4 : 2;
        const hex = this.text.slice(this.i, this.i + width);
        if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== width) this.fail('bad escape');
        out += String.fromCharCode(parseInt(hex, 16));
        this.i += width;
      } else out += `\\${escaped ?? ''}`;
    }
  }

  private expect(token: string): void {
    if (this.peek() !== token) this.fail(`expected "${token}"`);
    this.i++;
  }

  private skipSpace(): void {
    while (this.i < this.text.length && /\s/.test(this.text[this.i])) this.i++;
  }

  private fail(message: string): never {
    throw new PythonSyntaxError(`${message} at character ${this.i}`);
  }
}
