import type { DatabaseInfo, Verdict } from '../../core/model.js';
import { schemaIdentifiers } from '../sql/double-quotes.js';
import type { NormalizedQuery, Query } from '../sql/ast.js';
import { parseQuery } from '../sql/normalize.js';
import { isWord, significant, tokenize, unquote, type Token } from '../../runtime/sql/lexer.js';
import { slug } from './naming.js';
import { jsonKeyPrefix, LruMap } from '../../core/lru.js';
import { valueFitsType } from '../../runtime/rest/parameters.js';
import { typeFitsColumn } from './parameter-types.js';
import { placeholderOccurrences, replacePlaceholders } from '../../runtime/rest/placeholders.js';
import { EndpointSpecSchema, type EndpointSpec, type ParameterSpec } from '../../runtime/rest/spec.js';
import { placeholderSites } from './placeholder-sites.js';
import { readWithClause, recursiveSelects } from './with-clause.js';

/**
 * The format check of an endpoint spec (issue 3), before anything runs: LLM output goes
 * through it, so it assumes nothing — the shape against the schema, the SQL as exactly one
 * SELECT (a WITH clause before it allowed) over known columns, placeholders and parameters
 * matching one to one, and parameter types that fit the columns they are compared with.
 */

/** Words that never belong in a read-only SELECT (outside strings and quoted names). */
const STATEMENT_WORDS = new Set([
  'ATTACH',
  'DETACH',
  'PRAGMA',
  'DROP',
  'INSERT',
  'UPDATE',
  'DELETE',
  'CREATE',
  'ALTER',
  'VACUUM',
  'REINDEX',
  'ANALYZE',
  'BEGIN',
  'COMMIT',
  'ROLLBACK',
  'SAVEPOINT',
  'RELEASE',
]);
/** SQLite functions with side effects or file access (CLI/extension functions). */
const UNSAFE_FUNCTIONS = new Set([
  'LOAD_EXTENSION',
  'READFILE',
  'WRITEFILE',
  'EDIT',
  'FTS3_TOKENIZER',
  'ZIPFILE',
  'SQLAR_COMPRESS',
  'SQLAR_UNCOMPRESS',
]);

const NAME_ERRORS = /^(no such column|no such table|ambiguous column name)/;

export function checkEndpointSpec(spec: EndpointSpec, db: DatabaseInfo): Verdict {
  const early = checkShape(spec, db) ?? checkStatement(spec.sql) ?? checkPlaceholders(spec);
  if (early) return early;
  // Parsing is most of the cost, and the same SQL is checked again after dedup renamed its endpoint.
  const key = JSON.stringify([db.dbId, db.fingerprint, spec.sql, spec.parameters]);
  return sqlVerdicts.getOrSet(key, () => {
    const parsed = parseNames(spec, db);
    if ('ok' in parsed) return parsed;
    return (
      checkRecursion(spec, parsed) ??
      checkTypes(spec, db, parsed.query) ?? { ok: true, category: 'format:ok', message: 'spec well-formed' }
    );
  });
}

/** The SQL-dependent verdicts (a pure function of the SQL, parameters and database). */
const sqlVerdicts = new LruMap<string, Verdict>(4096);

/** Lets go of a database's verdicts: a run that is through with it. */
export function forgetEndpointChecks(db: DatabaseInfo): void {
  const prefix = jsonKeyPrefix(db.dbId, db.fingerprint);
  sqlVerdicts.deleteWhere((key) => key.startsWith(prefix));
}

function fail(why: string, message: string): Verdict {
  return { ok: false, category: `format:${why}`, message };
}

function checkShape(spec: unknown, db: DatabaseInfo): Verdict | null {
  const parsed = EndpointSpecSchema.safeParse(spec);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return fail('schema', `${issue.path.join('.') || 'spec'}: ${issue.message}`);
  }
  const names = parsed.data.parameters.map((p) => p.name);
  const duplicate = names.find((n, i) => names.indexOf(n) !== i);
  if (duplicate) return fail('schema', `parameter ${duplicate} declared twice`);
  const dbSegment = parsed.data.path.split('/')[3];
  if (dbSegment !== slug(db.dbId))
    return fail('schema', `path ${parsed.data.path} is not under the database ${slug(db.dbId)}`);
  return null;
}

function checkStatement(sql: string): Verdict | null {
  const tokens = tokenize(sql);
  const broken = tokens.find((t) => t.unterminated);
  if (broken) return fail('not_select', `unterminated ${broken.kind} at offset ${broken.start}`);
  const statements = splitStatements(significant(tokens));
  if (statements.length !== 1) return fail('not_select', `expected exactly one statement, got ${statements.length}`);
  const [statement] = statements;
  if (!isWord(statement[0], 'SELECT', 'WITH'))
    return fail('not_select', `the statement must start with SELECT or WITH, not ${statement[0].text.slice(0, 40)}`);
  if (isWord(statement[0], 'WITH')) {
    const main = readWithClause(statement)?.end ?? null;
    if (main === null) return fail('not_select', 'a malformed WITH clause');
    if (!isWord(statement[main], 'SELECT'))
      return fail(
        'not_select',
        `after its WITH clause the statement must be a SELECT, not ${statement[main]?.text.slice(0, 40) ?? 'nothing'}`,
      );
  }
  for (let i = 0; i < statement.length; i++) {
    const token = statement[i];
    if (token.kind !== 'word') continue;
    const upper = token.text.toUpperCase();
    if (STATEMENT_WORDS.has(upper)) return fail('not_select', `${upper} is not allowed in a read-only SELECT`);
    if (UNSAFE_FUNCTIONS.has(upper) && statement[i + 1]?.text === '(')
      return fail('not_select', `function ${upper} is not allowed`);
  }
  return null;
}

/** Statements separated by `;`, empty ones (a trailing `;`) dropped. */
function splitStatements(tokens: readonly Token[]): Token[][] {
  const statements: Token[][] = [[]];
  for (const token of tokens) {
    if (token.kind === 'punct' && token.text === ';') statements.push([]);
    else statements[statements.length - 1].push(token);
  }
  return statements.filter((s) => s.length > 0);
}

function checkPlaceholders(spec: EndpointSpec): Verdict | null {
  const occurrences = placeholderOccurrences(tokenize(spec.sql));
  const declared = new Set(spec.parameters.map((p) => p.name));
  const used = new Set<string>();
  for (const occurrence of occurrences) {
    if (occurrence.name === null)
      return fail('undeclared_placeholder', `placeholder ${occurrence.text}: only :name placeholders are allowed`);
    if (!declared.has(occurrence.name))
      return fail('undeclared_placeholder', `placeholder :${occurrence.name} is not a declared parameter`);
    used.add(occurrence.name);
  }
  const unused = spec.parameters.find((p) => !used.has(p.name));
  return unused ? fail('unused_parameter', `parameter ${unused.name} does not occur in the SQL`) : null;
}

/**
 * The SQL with every placeholder replaced by a literal of its type, for parsing (an undeclared
 * one, which the format check refuses before it parses, by NULL). The scope check parses the
 * same text: the parse the format check made.
 */
export function withSampleValues(spec: Pick<EndpointSpec, 'sql' | 'parameters'>): string {
  const byName = new Map(spec.parameters.map((p) => [p.name, p]));
  return replacePlaceholders(spec.sql, (name) => {
    const param = byName.get(name);
    return param ? sampleLiteral(param) : 'NULL';
  });
}

function sampleLiteral(param: ParameterSpec): string {
  switch (param.type) {
    case 'string':
      return "'x'";
    case 'integer':
    case 'boolean':
      return '1';
    case 'number':
      return '1.5';
  }
}

/** The SQL's normalized query, or why it has none. */
function parseNames(spec: EndpointSpec, db: DatabaseInfo): Verdict | NormalizedQuery {
  const identifiers = schemaIdentifiers(db, spec.sql);
  const stray = tokenize(spec.sql).find((t) => t.kind === 'dquote' && !identifiers.has(unquote(t).toLowerCase()));
  if (stray)
    return fail(
      'unknown_column',
      `${stray.text.slice(0, 60)} names no column or table (write strings in single quotes)`,
    );
  const parsed = parseQuery(withSampleValues(spec), db);
  if (parsed.ok) return parsed.value;
  return NAME_ERRORS.test(parsed.message)
    ? fail('unknown_column', parsed.message)
    : fail('not_select', `not a valid SELECT: ${parsed.message}`);
}

/**
 * No placeholder in a recursive table's recursive SELECT: its values say what the recursion
 * is (which rows are the next round's, when it stops: `WHERE depth < 5`), and a caller's
 * value there could make it another recursion, or an endless one. Where it starts (the
 * initial SELECT) and what is read of it (the main query) are a caller's to choose.
 */
function checkRecursion(spec: EndpointSpec, parsed: NormalizedQuery): Verdict | null {
  const tokens = tokenize(spec.sql);
  for (const [first, last] of recursiveSelects(tokens, parsed.recursive ?? [])) {
    const inside = tokens.slice(first, last + 1).find((t) => t.kind === 'param');
    if (inside)
      return fail(
        'recursive_parameter',
        `${inside.text} is in the recursive SELECT of a recursive WITH table: what the recursion does is not a parameter (keep the question's value there)`,
      );
  }
  return null;
}

function checkTypes(spec: EndpointSpec, db: DatabaseInfo, query: Query): Verdict | null {
  for (const param of spec.parameters) {
    if (param.example !== undefined && !valueFitsType(param.example, param.type)) {
      return fail(
        'parameter_type',
        `example of ${param.name} is not of type ${param.type}: ${JSON.stringify(param.example)}`,
      );
    }
  }
  const byName = new Map(spec.parameters.map((p) => [p.name, p]));
  for (const { name, site, column } of placeholderSites(spec.sql, query, db)) {
    const param = byName.get(name)!;
    if ((site.op === 'LIKE' || site.op === 'NOT LIKE') && param.type !== 'string') {
      return fail('parameter_type', `${param.name} is a LIKE pattern but declared ${param.type}`);
    }
    if (site.bare && column && !typeFitsColumn(param.type, column)) {
      return fail(
        'parameter_type',
        `${param.name} is declared ${param.type} but compared with ${column.table.name}.${column.column.name} (${column.column.type || 'untyped'})`,
      );
    }
  }
  return null;
}
