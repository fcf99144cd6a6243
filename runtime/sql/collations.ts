import { isWord, significant, tokenize, unquote, type Token } from './lexer.js';

/**
 * The collations a CREATE TABLE statement declares on its columns (`name TEXT COLLATE
 * NOCASE`), by lower-cased column name; columns that compare as BINARY (the default) are
 * left out. PRAGMA table_info does not report them, and they change what `=` means: under
 * NOCASE, `name = 'ann'` holds for 'ANN' too, so an equality no longer pins one value.
 */
export function declaredCollations(createSql: string): Map<string, string> {
  const collations = new Map<string, string>();
  for (const definition of columnDefinitions(significant(tokenize(createSql)))) {
    const [name, ...rest] = definition;
    if (!name || isWord(name, 'CONSTRAINT', 'PRIMARY', 'UNIQUE', 'CHECK', 'FOREIGN')) continue;
    let depth = 0;
    rest.forEach((token, i) => {
      if (token.text === '(') depth++;
      else if (token.text === ')') depth--;
      else if (depth === 0 && isWord(token, 'COLLATE') && rest[i + 1]) {
        const collation = unquote(rest[i + 1]).toUpperCase();
        if (collation !== 'BINARY') collations.set(unquote(name).toLowerCase(), collation);
      }
    });
  }
  return collations;
}

/** The comma-separated items between the statement's outermost parentheses. */
function columnDefinitions(tokens: Token[]): Token[][] {
  const open = tokens.findIndex((t) => t.text === '(');
  if (open < 0) return []; // CREATE TABLE … AS SELECT: no declared collations
  const items: Token[][] = [[]];
  let depth = 0;
  for (const token of tokens.slice(open + 1)) {
    if (token.text === '(') depth++;
    if (token.text === ')' && depth-- === 0) break;
    if (token.text === ',' && depth === 0) items.push([]);
    else items[items.length - 1].push(token);
  }
  return items;
}
