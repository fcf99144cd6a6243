import type { DatabaseInfo, SqlValue, ToolCall, ToolPool } from '../../core/model.js';
import { LruMap } from '../../core/lru.js';
import { SlotCompiler } from '../../runtime/slot/compiler.js';
import { materialize } from '../../runtime/slot/execute.js';
import { startingTableKeys, type StartingTableRef } from '../../runtime/slot/keys.js';
import { emptyFacts, probeSourceFacts } from '../../runtime/slot/source-facts.js';
import { INITIALIZE_TOOL } from '../../runtime/slot/catalog.js';
import type { SqlExecutor } from '../../runtime/sql/executor.js';
import { castAffinity } from '../../generators/sql/normalize.js';
import { slotView } from '../../eval/predictions/published-names.js';
import { answerLabelsOf } from '../../eval/answer-labels.js';
import { quoteIdent } from '../../runtime/slot/sqlfrag.js';
import type { EvalItem } from '../../eval/dataset.js';
import type { LiveApiBenchPandas } from '../../config/schema.js';

/**
 * What the Live API-Bench runtime (IBM/m3-train-eval invocable_api_hub) makes of a sample's
 * data, so that the export can write its gold in a form that runtime compares equal to
 * SQLite's answer, without changing the answer:
 *
 * - Its tables pass through pandas: `read_sql_query`, then a CSV file between every two
 *   calls, read back by `read_csv`. A numeric column with a NULL or a fraction anywhere comes
 *   back as floats (`375.0`); a column whose text is all digits comes back as numbers, which
 *   text never equals (its filter turns an integer into text, not text into a number).
 * - Its starting table is a chain of pandas inner merges, which keep the left table's row
 *   order (pandas ≥ 2.2; documented): each table's rows in its scan order, the joined tables
 *   nested in join order. nl2api's runtime enumerates a join as SQLite's planner nests it.
 *
 * Read in the export's gold run, which has the database open (gold-run.ts).
 */

/** How the runtime reads a stored column back, as far as the export writes for it. */
export interface ColumnReading {
  /** Its whole numbers come back as floats (`375.0`): numbers with a NULL or a fraction among them. */
  floats: boolean;
  /**
   * It comes back as numbers (numbers, or text that is all integers), and SQLite compares it
   * with integer text as with that integer (a numeric column holding numbers converts the
   * text; a TEXT column the integer): so a filter's integer text is written as the number.
   */
  comparedAsNumbers: boolean;
}

export interface PandasReading {
  /** The pandas these were read for. */
  pandas: LiveApiBenchPandas;
  /** Per starting key (nl2api's name) of the sample's starting tables. */
  columns: Record<string, ColumnReading>;
  /**
   * The answer's rows in the runtime's order (joins nested in join order, each table in scan
   * order), for an answer of several columns whose calls sort nothing: the runtime compares
   * such columns in order. Absent otherwise (and where the calls do not compile alone).
   */
  joinOrderRows?: SqlValue[][];
}

export interface ReadingContext {
  db: DatabaseInfo;
  executor: SqlExecutor;
  pool: ToolPool;
  timeoutMs: number;
  /** The pandas the runtime runs on: the order of its merges' rows. */
  pandas: LiveApiBenchPandas;
}

export async function pandasReading(item: EvalItem, context: ReadingContext): Promise<PandasReading> {
  const columns: Record<string, ColumnReading> = {};
  for (const init of item.initialization) {
    if (init.name !== INITIALIZE_TOOL) continue;
    const refs = (init.arguments.tables ?? []) as StartingTableRef[];
    for (const key of startingTableKeys(context.db, refs)) {
      const readings = await tableReadings(key.table, context);
      const reading = readings.get(key.column);
      if (reading) columns[key.key] ??= reading;
    }
  }
  const views = item.goldCalls.map((call) => ({ ...slotView(call, item.bindings), label: call.label }));
  const severalColumns = (item.gold.rows[0]?.length ?? 0) > 1 && item.gold.rows.length > 1;
  const joinOrderRows =
    severalColumns && !views.some((view) => view.tool === 'sort_data')
      ? await rowsInJoinOrder(
          item.initialization,
          views.map((view) => ({ name: view.tool, arguments: view.arguments, label: view.label })),
          answerLabelsOf(item),
          context,
        )
      : undefined;
  return { pandas: context.pandas, columns, ...(joinOrderRows ? { joinOrderRows } : {}) };
}

/** One scan per table (cached by database content): per column, how the runtime reads it back. */
const readingCache = new LruMap<string, Map<string, ColumnReading>>(1024);

async function tableReadings(table: string, { db, executor, timeoutMs }: ReadingContext) {
  const cacheKey = `${db.fingerprint}\n${db.path}\n${table}`;
  const known = readingCache.get(cacheKey);
  if (known) return known;
  const info = db.tables.find((t) => t.name === table);
  const readings = new Map<string, ColumnReading>();
  if (!info || info.columns.length === 0) return readings;
  // Per column: NULLs, fractions, text, and text that is an integer (an optional minus, digits).
  const parts = info.columns.flatMap(({ name }) => {
    const c = quoteIdent(name);
    return [
      `sum(${c} IS NULL)`,
      `sum(typeof(${c}) = 'real')`,
      `sum(typeof(${c}) IN ('text', 'blob'))`,
      `sum(typeof(${c}) = 'text' AND (${c} GLOB '[0-9]*' OR ${c} GLOB '-[0-9]*') AND ltrim(${c}, '-') NOT GLOB '*[^0-9]*' AND length(${c}) - length(ltrim(${c}, '-')) <= 1)`,
    ];
  });
  const result = await executor.run({
    dbPath: db.path,
    sql: `SELECT ${parts.join(', ')} FROM ${quoteIdent(info.name)}`,
    params: [],
    timeoutMs,
  });
  const row = result.rows[0] ?? [];
  info.columns.forEach((column, i) => {
    const [nulls, fractions, text, integerText] = row.slice(4 * i, 4 * i + 4).map((v) => Number(v ?? 0));
    readings.set(
      column.name,
      columnReading({ nulls, fractions, text, integerText }, castAffinity(column.type.toUpperCase())),
    );
  });
  readingCache.set(cacheKey, readings);
  return readings;
}

/** How pandas reads back a column with these counts (read_sql_query, then to_csv and read_csv), and how SQLite compares it. */
export function columnReading(
  counts: { nulls: number; fractions: number; text: number; integerText: number },
  affinity: string,
): ColumnReading {
  if (counts.text > 0) {
    const digits = counts.integerText === counts.text && counts.fractions === 0;
    return { floats: false, comparedAsNumbers: digits && affinity === 'text' };
  }
  return {
    floats: counts.nulls > 0 || counts.fractions > 0,
    comparedAsNumbers: affinity === 'integer' || affinity === 'real' || affinity === 'numeric',
  };
}

/**
 * The answer columns' values row by row, computed as nl2api's runtime computes them but with
 * the starting table enumerated in join order (no planner nesting): each joined table's rows
 * nested inside the previous ones', in rowid order, which is pandas' order from 2.2; for pandas
 * before 2.2 (`'1.5'`), its merges' order instead (mergeOrderOf). Undefined when the calls do
 * not compile alone, or the order cannot be known.
 */
async function rowsInJoinOrder(
  initialization: readonly ToolCall[],
  calls: readonly ToolCall[],
  answerLabels: readonly string[],
  context: ReadingContext,
): Promise<SqlValue[][] | undefined> {
  const { db, executor, pool, timeoutMs } = context;
  const facts = emptyFacts();
  await probeSourceFacts(db, pool, initialization, executor, timeoutMs, facts);
  facts.sourceOrders.clear();
  const compiler = new SlotCompiler(db, pool, facts);
  try {
    for (const call of initialization) compiler.define(call, { initialization: true });
    for (const call of calls) compiler.define(call);
  } catch {
    return undefined;
  }
  const columns: SqlValue[][] = [];
  let identities: SqlValue[][] | undefined;
  for (const label of answerLabels) {
    const relation = compiler.relation(label, { withOrder: identities === undefined });
    const result = await executor.run({ dbPath: db.path, sql: relation.sql, params: relation.params, timeoutMs });
    const width = relation.keys.length;
    if (relation.orderColumns) identities = result.rows.map((row) => row.slice(width));
    const output = materialize({ ...result, rows: result.rows.map((row) => row.slice(0, width)) }, relation.kind);
    if (output.kind === 'scalar') return undefined;
    if (output.kind === 'list') columns.push(output.values);
    else output.columns.forEach((_, c) => columns.push(output.rows.map((row) => row[c])));
    if (relation.orderColumns && !relation.orderColumns.every((column, i) => column === `__rid_${i + 1}`))
      identities = []; // not one rowid per joined table: the merge order is not known
  }
  if (columns.length < 2) return undefined;
  const length = columns[0]?.length ?? 0;
  if (columns.some((column) => column.length !== length)) return undefined;
  const rows = Array.from({ length }, (_, i) => columns.map((column) => column[i]));
  if (context.pandas !== '1.5') return rows;
  const [init] = initialization;
  const order = identities?.length === length && init ? await mergeOrderOf(init, context) : undefined;
  if (!order) return undefined;
  const position = (i: number) => order.get(identities![i].join(',')) ?? Infinity;
  return rows
    .map((row, i) => ({ row, at: position(i) }))
    .sort((a, b) => a.at - b.at)
    .map(({ row }) => row);
}

/**
 * pandas before 2.2: the position of each row of the starting table (its joined tables'
 * rowids, `1,7,3`) as its inner merges order them. A merge of the table so far with the next
 * one groups its rows by join key, keys in the order they first occur on the left, each
 * group's left rows in their order, each with the matching right rows in theirs. Undefined
 * for a join pandas does not make of one equality per table, or past a million rows.
 */
async function mergeOrderOf(init: ToolCall, context: ReadingContext): Promise<Map<string, number> | undefined> {
  const refs = (init.arguments.tables ?? []) as StartingTableRef[];
  const joins = (init.arguments.joins ?? []) as { on?: { left: string; right: string }[] }[];
  const aliases = refs.map((ref) => ref.alias.toLowerCase());
  const split = (qualified: string) => {
    const dot = qualified.indexOf('.');
    return { table: aliases.indexOf(qualified.slice(0, dot).toLowerCase()), column: qualified.slice(dot + 1) };
  };
  let merged: number[][] = (await tableRows(refs[0].table, [], context)).map(({ rowid }) => [rowid]);
  for (const [i, join] of joins.entries()) {
    const [on] = join.on ?? [];
    if (!on || join.on!.length !== 1) return undefined;
    const [a, b] = [split(on.left), split(on.right)];
    const [left, right] = a.table === i + 1 ? [b, a] : [a, b];
    if (right.table !== i + 1 || left.table < 0 || left.table > i) return undefined;
    const leftValues = new Map(
      (await tableRows(refs[left.table].table, [left.column], context)).map((r) => [r.rowid, r.values[0]]),
    );
    const matches = new Map<string, number[]>();
    for (const r of await tableRows(refs[i + 1].table, [right.column], context)) {
      if (r.values[0] === null) continue;
      const key = String(r.values[0]);
      (matches.get(key) ?? matches.set(key, []).get(key)!).push(r.rowid);
    }
    const groups = new Map<string, number[][]>();
    for (const row of merged) {
      const value = leftValues.get(row[left.table]) ?? null;
      if (value === null || !matches.has(String(value))) continue;
      const key = String(value);
      (groups.get(key) ?? groups.set(key, []).get(key)!).push(row);
    }
    merged = [...groups].flatMap(([key, rows]) => rows.flatMap((row) => matches.get(key)!.map((rid) => [...row, rid])));
    if (merged.length > MAX_MERGED_ROWS) return undefined;
  }
  return new Map(merged.map((row, position) => [row.join(','), position]));
}

const MAX_MERGED_ROWS = 1_000_000;

/** A table's rows in scan (rowid) order: each one's rowid and the named columns' values. */
async function tableRows(
  table: string,
  columns: readonly string[],
  { db, executor, timeoutMs }: ReadingContext,
): Promise<{ rowid: number; values: SqlValue[] }[]> {
  const result = await executor.run({
    dbPath: db.path,
    sql: `SELECT rowid, ${[...columns.map(quoteIdent), 'NULL'].join(', ')} FROM ${quoteIdent(table)} ORDER BY rowid`,
    params: [],
    timeoutMs,
  });
  return result.rows.map((row) => ({ rowid: Number(row[0]), values: row.slice(1) }));
}

/** The strings pandas' read_csv takes for a missing value by default (its `na_values`). */
export const PANDAS_MISSING: ReadonlySet<string> = new Set([
  '',
  '#N/A',
  '#N/A N/A',
  '#NA',
  '-1.#IND',
  '-1.#QNAN',
  '-NaN',
  '-nan',
  '1.#IND',
  '1.#QNAN',
  '<NA>',
  'N/A',
  'NA',
  'NULL',
  'NaN',
  'None',
  'n/a',
  'nan',
  'null',
]);
