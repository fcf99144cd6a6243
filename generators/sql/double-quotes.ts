import type { DatabaseInfo } from '../../pipeline/model.js';

/**
 * SQLite reads `"x"` as an identifier when it names something in scope and otherwise, for
 * compatibility, as the string 'x'. BIRD's gold SQL relies on that; better-sqlite3's SQLite
 * is built without the fallback. These helpers make the fallback explicit so the SQL runs
 * (and parses) the way the dataset's authors saw it run.
 */

type Token = { kind: 'single' | 'double' | 'other'; text: string };

/** Splits SQL into quoted tokens and the text between them (comments and `...`/[...] kept whole). */
function tokenize(sql: string): Token[] {
  const tokens: Token[] = [];
  let plain = '';
  let i = 0;
  const flushPlain = () => {
    if (plain) tokens.push({ kind: 'other', text: plain });
    plain = '';
  };
  while (i < sql.length) {
    const ch = sql[i];
    const closing = ch === "'" || ch === '"' || ch === '`' ? ch : ch === '[' ? ']' : undefined;
    if (closing) {
      let j = i + 1;
      while (j < sql.length) {
        if (sql[j] === closing) {
          // A doubled quote inside a quoted token is an escaped quote.
          if (closing !== ']' && sql[j + 1] === closing) {
            j += 2;
            continue;
          }
          break;
        }
        j++;
      }
      const text = sql.slice(i, j + 1);
      if (ch === "'" || ch === '"') {
        flushPlain();
        tokens.push({ kind: ch === "'" ? 'single' : 'double', text });
      } else {
        plain += text;
      }
      i = j + 1;
      continue;
    }
    const commentEnd =
      ch === '-' && sql[i + 1] === '-'
        ? sql.indexOf('\n', i) === -1
          ? sql.length
          : sql.indexOf('\n', i)
        : ch === '/' && sql[i + 1] === '*'
          ? sql.indexOf('*/', i + 2) === -1
            ? sql.length
            : sql.indexOf('*/', i + 2) + 2
          : -1;
    if (commentEnd !== -1) {
      plain += sql.slice(i, commentEnd);
      i = commentEnd;
      continue;
    }
    plain += ch;
    i++;
  }
  flushPlain();
  return tokens;
}

function unquote(token: string): string {
  const quote = token[0];
  return token.slice(1, -1).split(quote + quote).join(quote);
}

/**
 * Rewrites every double-quoted token that does not name one of `identifiers` (compared
 * case-insensitively) into a single-quoted string literal.
 */
export function resolveDoubleQuotedStrings(sql: string, identifiers: ReadonlySet<string>): string {
  return tokenize(sql)
    .map((token) => {
      if (token.kind !== 'double') return token.text;
      const name = unquote(token.text);
      if (identifiers.has(name.toLowerCase())) return token.text;
      return `'${name.split("'").join("''")}'`;
    })
    .join('');
}

/**
 * Lower-cased names a double-quoted token may refer to in `sql`: the tables it mentions,
 * their columns, and the aliases it defines (`AS name`, `table alias`).
 */
export function schemaIdentifiers(db: DatabaseInfo, sql: string): Set<string> {
  const unquotedText = tokenize(sql)
    .filter((t) => t.kind === 'other')
    .map((t) => t.text)
    .join(' ');
  const words = new Set((unquotedText.match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? []).map((w) => w.toLowerCase()));
  // Table names can themselves be quoted (`order`, "order"): accept any quoted mention too.
  const quotedNames = new Set(
    tokenize(sql)
      .filter((t) => t.kind === 'double')
      .map((t) => unquote(t.text).toLowerCase()),
  );
  const backquoted = (sql.match(/`[^`]*`|\[[^\]]*\]/g) ?? []).map((t) => t.slice(1, -1).toLowerCase());
  const identifiers = new Set<string>();
  for (const table of db.tables) {
    const name = table.name.toLowerCase();
    if (!words.has(name) && !quotedNames.has(name) && !backquoted.includes(name)) continue;
    identifiers.add(name);
    for (const column of table.columns) identifiers.add(column.name.toLowerCase());
  }
  const aliasPattern = /\bAS\s+([A-Za-z_][A-Za-z0-9_]*)/gi;
  for (const match of unquotedText.matchAll(aliasPattern)) identifiers.add(match[1].toLowerCase());
  const tableAliasPattern = /\b(?:FROM|JOIN)\s+(?:`[^`]*`|\[[^\]]*\]|[A-Za-z_][A-Za-z0-9_]*)\s+(?:AS\s+)?([A-Za-z_][A-Za-z0-9_]*)/gi;
  for (const match of sql.matchAll(tableAliasPattern)) identifiers.add(match[1].toLowerCase());
  return identifiers;
}
