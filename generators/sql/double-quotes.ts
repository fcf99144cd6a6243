import type { DatabaseInfo } from '../../core/model.js';
import { significant, sqlString, tokenize, unquote, type Token } from '../../runtime/sql/lexer.js';

/**
 * SQLite reads `"x"` as an identifier when it names something in scope and otherwise, for
 * compatibility, as the string 'x'. BIRD's gold SQL relies on that; better-sqlite3's SQLite
 * is built without the fallback. These helpers make the fallback explicit so the SQL runs
 * (and parses) the way the dataset's authors saw it run.
 */

/**
 * Rewrites every double-quoted token that does not name one of `identifiers` (compared
 * case-insensitively) into a single-quoted string literal.
 */
export function resolveDoubleQuotedStrings(sql: string, identifiers: ReadonlySet<string>): string {
  return tokenize(sql)
    .map((token) => {
      if (token.kind !== 'dquote') return token.text;
      const name = unquote(token);
      return identifiers.has(name.toLowerCase()) ? token.text : sqlString(name);
    })
    .join('');
}

/**
 * Lower-cased names a double-quoted token may refer to in `sql`: the tables it mentions
 * (bare or quoted), their columns, and the aliases it defines (`AS name`, `table alias`).
 */
export function schemaIdentifiers(db: DatabaseInfo, sql: string): Set<string> {
  const tokens = significant(tokenize(sql));
  const mentioned = new Set(
    tokens
      .filter((t) => t.kind === 'word' || t.kind === 'dquote' || t.kind === 'quoted')
      .map((t) => unquote(t).toLowerCase()),
  );
  const identifiers = new Set<string>();
  for (const table of db.tables) {
    const name = table.name.toLowerCase();
    if (!mentioned.has(name)) continue;
    identifiers.add(name);
    for (const column of table.columns) identifiers.add(column.name.toLowerCase());
  }
  tokens.forEach((token, i) => {
    const alias = aliasAt(tokens, i);
    if (alias) identifiers.add(alias);
  });
  return identifiers;
}

const isKeyword = (token: Token | undefined, keyword: string) =>
  token?.kind === 'word' && token.text.toUpperCase() === keyword;
const isName = (token: Token | undefined) => token?.kind === 'word' || token?.kind === 'quoted';

/** The alias a bare word at `i` defines: after AS, or right after a table name in FROM/JOIN. */
function aliasAt(tokens: readonly Token[], i: number): string | undefined {
  const token = tokens[i];
  if (token.kind !== 'word') return undefined;
  if (isKeyword(tokens[i - 1], 'AS')) return token.text.toLowerCase();
  const afterTable = isName(tokens[i - 1]) && (isKeyword(tokens[i - 2], 'FROM') || isKeyword(tokens[i - 2], 'JOIN'));
  return afterTable ? token.text.toLowerCase() : undefined;
}
