import { placeholderName, splice, tokenize, type Token } from '../sql/lexer.js';

/**
 * `:name` placeholders as tokens: occurrences in strings, quoted identifiers and comments
 * are not tokens of kind `param`, so they are never seen (or replaced) here.
 */

export interface Occurrence {
  /** Index in the token list. */
  index: number;
  /** The `:name` name, or null for SQLite's other parameter forms (`?`, `@x`, `$x`). */
  name: string | null;
  text: string;
}

export function placeholderOccurrences(tokens: readonly Token[]): Occurrence[] {
  return tokens.flatMap((token, index) =>
    token.kind === 'param' ? [{ index, name: placeholderName(token), text: token.text }] : [],
  );
}

/** Replaces every `:name` placeholder by `render(name)`; other text untouched. */
export function replacePlaceholders(sql: string, render: (name: string) => string): string {
  const tokens = tokenize(sql);
  const replacements = new Map<number, string>();
  for (const occurrence of placeholderOccurrences(tokens)) {
    if (occurrence.name !== null) replacements.set(occurrence.index, render(occurrence.name));
  }
  return splice(tokens, replacements);
}

/** What is wrong with a SQL's placeholders against the declared parameter names, if anything. */
export function placeholderProblem(sql: string, declared: ReadonlySet<string>): string | undefined {
  for (const occurrence of placeholderOccurrences(tokenize(sql))) {
    if (occurrence.name === null) return `${occurrence.text}: only :name placeholders are supported`;
    if (!declared.has(occurrence.name)) return `the undeclared placeholder :${occurrence.name}`;
  }
  return undefined;
}
