import type { DatabaseInfo, Instance } from '../../core/model.js';
import { accept, reject, type Outcome } from '../../core/outcome.js';
import type { Query, SelectQuery } from '../sql/ast.js';
import { resolveDoubleQuotedStrings, schemaIdentifiers } from '../sql/double-quotes.js';
import { parseQuery } from '../sql/normalize.js';
import {
  columnAffinity,
  columnResolver,
  scopedColumnResolver,
  type ColumnResolver,
  type ResolvedColumn,
} from './columns.js';
import { splice, tokenize, unquote, type Token } from '../../runtime/sql/lexer.js';
import {
  clip,
  endpointPath,
  parameterBaseName,
  parameterDescription,
  parameterPhrase,
  pascal,
  truncateIdentifier,
  uniqueName,
  words,
  type Role,
} from './naming.js';
import type { ArgumentValue, EndpointSpec, ParameterSpec, SynthesizedEndpoint } from '../../runtime/rest/spec.js';
import { dateFormatOf } from '../../runtime/rest/parameters.js';
import { numericParameterType } from './parameter-types.js';
import { findValueSites, type Clause, type ColumnRef, type ValueSite } from './value-sites.js';
import { joinRole, selects } from './roles.js';
import { exprLabel, firstSelect, itemPhrase, itemWords } from './select-items.js';
import { recursiveSelects } from './with-clause.js';

/**
 * The deterministic template synthesizer (issue 3): the literals a user would vary — the
 * operands of comparisons, IN lists, BETWEEN bounds and LIKE patterns in WHERE, HAVING and
 * JOIN ... ON — become typed `:name` parameters named after the column they are compared
 * with; the call's arguments are the question's own values, so calling the endpoint
 * reproduces the gold query. LIMIT counts, the literals of computed columns and those of a
 * recursive WITH table's recursive SELECT stay: they are the question's shape, not its
 * values (the initial SELECT's are parameters: where the recursion starts).
 */

const PARAMETER_CLAUSES: ReadonlySet<Clause> = new Set(['where', 'having', 'on']);

interface Parameter {
  spec: ParameterSpec;
  phrase: string;
  value: ArgumentValue;
  site: ValueSite;
  column: ResolvedColumn | null;
  role: Role | null;
}

export function synthesizeFromTemplate(
  instance: Instance,
  db: DatabaseInfo,
  datasetName: string,
): Outcome<SynthesizedEndpoint> {
  const sql = resolveDoubleQuotedStrings(instance.sql, schemaIdentifiers(db, instance.sql)).trim();
  const parsed = parseQuery(sql, db);
  if (!parsed.ok) return reject('synth_failed', `gold SQL does not parse: ${parsed.message}`);
  const query = parsed.value.query;
  const resolve = columnResolver(query, db);
  const tokens = tokenize(sql);
  const resolveAt = scopedColumnResolver(tokens, query, db);
  const windowAliases = windowResultAliases(query);
  const outerTables = outerTablesOf(query);
  const recursive = recursiveSelects(tokens, parsed.value.recursive ?? []);

  const taken = new Set<string>();
  const parameters: Parameter[] = [];
  const replacements = new Map<number, string>();
  for (const site of findValueSites(tokens)) {
    if (!PARAMETER_CLAUSES.has(site.clause)) continue;
    // A recursive SELECT's values are the recursion itself (format-check.ts, checkRecursion).
    if (recursive.some(([first, last]) => site.first > first && site.last < last)) continue;
    const resolved = resolveSite(site, resolveAt);
    const column = resolved?.column ?? null;
    // A window's rank or row number is the query's own bookkeeping, not something a caller knows.
    if (!column && site.columns.some((ref) => ref.qualifier === null && windowAliases.has(ref.name.toLowerCase())))
      continue;
    const typed = typedValue(tokens, site, column);
    if (typed === null) continue;
    const role =
      (resolved?.ref.qualifier ? joinRole(resolved.ref.qualifier, query, db) : null) ??
      (column && !outerTables.has(column.table.name.toLowerCase())
        ? { kind: 'subquery' as const, table: column.table.name }
        : null);
    const name = uniqueName(parameterBaseName(site, column, role), taken);
    parameters.push({
      spec: {
        name,
        type: typed.type,
        description: '',
        required: true,
        example: typed.value,
        ...dateFormat(site, typed),
      },
      phrase: parameterPhrase(site, column, role),
      value: typed.value,
      site,
      column,
      role,
    });
    for (let i = site.first; i <= site.last; i++) replacements.set(i, i === site.first ? `:${name}` : '');
  }
  describeParameters(parameters);

  // The format check is the pipeline's (rest.synthesize's verify-and-retry loop), as for any synthesizer.
  const spec = endpointSpec(query, splice(tokens, replacements), parameters, resolve, db, datasetName);
  const args = Object.fromEntries(parameters.map((p) => [p.spec.name, p.value]));
  return accept({ spec, call: { name: spec.operationId, path: spec.path, arguments: args } });
}

/**
 * A text parameter compared as a whole with a column (no LIKE pattern, no function around
 * the column) takes the date form its question value has, if it has one: the server then
 * refuses `2019-09-01_zz` instead of matching nothing.
 */
function dateFormat(site: ValueSite, typed: { type: ParameterSpec['type']; value: ArgumentValue }) {
  if (typed.type !== 'string' || !site.bare || site.fn !== null || site.op === 'LIKE' || site.op === 'NOT LIKE')
    return {};
  const format = dateFormatOf(typed.value);
  return format ? { format } : {};
}

/**
 * The tables whose rows the endpoint returns, lower case: its SELECT's FROM tables. A value
 * compared with any other table's column (a subquery's) is named and described with that
 * table. A derived table's rows are its own FROM tables'; every table of a compound query
 * (UNION) is named so: each branch reads its own.
 */
function outerTablesOf(query: Query): Set<string> {
  if (query.kind !== 'select' || !query.from) return new Set();
  return new Set(
    [query.from.base, ...query.from.joins.map((j) => j.item)].flatMap((item) =>
      item.kind === 'table' ? [item.table.toLowerCase()] : [...outerTablesOf(item.query)],
    ),
  );
}

/** The aliases given window function results (`RANK() OVER (…) AS rnk`) anywhere in the query, lower case. */
function windowResultAliases(query: Query): Set<string> {
  return new Set(
    selects(query).flatMap((select) =>
      select.columns.flatMap((c) => (c.expr.kind === 'window' && c.alias ? [c.alias.toLowerCase()] : [])),
    ),
  );
}

function resolveSite(
  site: ValueSite,
  resolve: (ref: ColumnRef, at: number) => ResolvedColumn | null,
): { column: ResolvedColumn; ref: ColumnRef } | null {
  for (const ref of site.columns) {
    const column = resolve(ref, site.first);
    if (column) return { column, ref };
  }
  return null;
}

/**
 * Each parameter's description; parameters alike even with their column and role (the
 * items of an IN list, one column compared twice) are numbered in SQL order, so that no
 * two descriptions of an endpoint are equal.
 */
function describeParameters(parameters: Parameter[]): void {
  const plain = parameters.map((p) => parameterDescription(p.site, p.column, p.role));
  parameters.forEach((p, i) => {
    const alike = plain.flatMap((d, j) => (d === plain[i] ? [j] : []));
    const position = alike.length > 1 ? { index: alike.indexOf(i) + 1, count: alike.length } : null;
    p.spec.description = parameterDescription(p.site, p.column, p.role, position);
  });
}

/**
 * The literal as a typed argument. A bound value takes the compared column's affinity just
 * as the literal did, so `int_col = '5'` may become integer 5 and `text_col = 2012` the
 * string '2012' (its text as written) without changing the rows. A literal that fits no
 * type of its column (`int_col = 'n/a'`), or is compared with nothing nameable, stays.
 */
function typedValue(
  tokens: readonly Token[],
  site: ValueSite,
  column: ResolvedColumn | null,
): { type: ParameterSpec['type']; value: ArgumentValue } | null {
  if (site.columns.length === 0 && site.fn === null) return null;
  const literal = tokens[site.last];
  const affinity = site.bare && column ? columnAffinity(column.column) : 'blob';
  const isLike = site.op === 'LIKE' || site.op === 'NOT LIKE';
  if (literal.kind === 'string') {
    const text = unquote(literal);
    if (isLike || (affinity !== 'integer' && affinity !== 'real')) return { type: 'string', value: text };
    const number = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(text) ? Number(text) : NaN;
    if (!Number.isFinite(number)) return null;
    return { type: numericParameterType(affinity, Number.isSafeInteger(number) && !/[.eE]/.test(text)), value: number };
  }
  if (literal.kind !== 'number' || isLike || /^0x/i.test(literal.text)) return null;
  const signed = tokens
    .slice(site.first, site.last + 1)
    .filter((t) => t.kind !== 'space' && t.kind !== 'comment')
    .map((t) => t.text)
    .join('');
  if (affinity === 'text') return { type: 'string', value: signed.replace(/^\+/, '') };
  const value = Number(signed);
  if (/[.eE]/.test(literal.text)) return Number.isFinite(value) ? { type: 'number', value } : null;
  return Number.isSafeInteger(value) ? { type: numericParameterType(affinity, true), value } : null;
}

// ---- endpoint metadata ----------------------------------------------------------------------

function endpointSpec(
  query: Query,
  sql: string,
  parameters: Parameter[],
  resolve: ColumnResolver,
  db: DatabaseInfo,
  datasetName: string,
): EndpointSpec {
  const select = firstSelect(query);
  const items = select.columns;
  const baseTable = select.from?.base.kind === 'table' ? select.from.base.table : null;
  const subject =
    items.length > 2 && baseTable
      ? [...words(baseTable), 'details']
      : items.flatMap((item, i) => [...(i ? ['and'] : []), ...itemWords(item, baseTable, resolve)]);
  const filters = [...new Set(parameters.map((p) => p.spec.name.replace(/_\d+$/, '')))].slice(0, 3);
  const operationId = truncateIdentifier(
    `get${pascal(subject.slice(0, 8)) || 'Rows'}${filters.length ? `By${filters.map((f) => pascal(f.split('_'))).join('And')}` : ''}`,
  );
  const phrases = items.slice(0, 6).map((item) => itemPhrase(item, resolve));
  const filterText = parameters.map((p) => p.phrase.replace(/^./, (c) => c.toLowerCase()));
  const summary = clip(
    `Get ${phrases.join(', ')}${parameters.length ? ` by ${filters.map((f) => f.split('_').join(' ')).join(', ')}` : ''}`,
    200,
  );
  const description = clip(
    [
      `Returns ${phrases.join('; ')}${items.length > phrases.length ? ` and ${items.length - phrases.length} more columns` : ''}${tablesOf(select)}.`,
      parameters.length ? `Filtered by: ${filterText.join('; ')}.` : '',
      shapeText(query, resolve),
    ]
      .filter(Boolean)
      .join(' '),
    2000,
  );
  const response = clip(
    `Rows with the columns ${items.map((item, i) => `${item.name} (${phrases[i] ?? itemPhrase(item, resolve)})`).join(', ')}`,
    1000,
  );
  return {
    operationId,
    path: endpointPath(datasetName, db.dbId, operationId),
    summary,
    description,
    parameters: parameters.map((p) => p.spec),
    sql,
    response: { description: response },
  };
}

function tablesOf(select: SelectQuery): string {
  if (!select.from) return '';
  const tables = [select.from.base, ...select.from.joins.map((j) => j.item)].map((i) =>
    i.kind === 'table' ? i.table : 'a derived table',
  );
  return ` from ${[...new Set(tables)].join(', ')}`;
}

function shapeText(query: Query, resolve: ColumnResolver): string {
  const parts: string[] = [];
  if (query.kind === 'select' && query.groupBy.length)
    parts.push('Grouped per ' + query.groupBy.map((e) => exprLabel(e, resolve)).join(', ') + '.');
  if (query.orderBy.length) {
    parts.push(
      'Ordered by ' +
        query.orderBy
          .map((o) => `${exprLabel(o.expr, resolve)} (${o.direction === 'desc' ? 'descending' : 'ascending'})`)
          .join(', ') +
        '.',
    );
  }
  if (query.limit?.kind === 'literal')
    parts.push(`At most ${query.limit.raw} row${query.limit.raw === '1' ? '' : 's'}.`);
  return parts.join(' ');
}
