import fs from 'node:fs';
import type { DatabaseInfo, DataKey, SlotSequence, ToolCall, ToolPool } from '../../core/model.js';
import { decompose } from '../../generators/slot/decompose.js';
import { withDataKeys } from '../../generators/slot/dependencies.js';
import { parseQuery } from '../../generators/sql/normalize.js';

/**
 * The golden fixture files of test/decompose/golden/ (format: see golden.test.ts): reading
 * them, the decomposer's verdict on a case as the text its expectation is written in, and
 * writing a file back with new expectations.
 */

export interface GoldenCase {
  /** 1-based line of the case's first line (comment or SQL) in its file. */
  line: number;
  /** The case's comment and SQL lines, as written (kept verbatim on update). */
  header: string[];
  sql: string;
  pool: ToolPool;
  /** `# data keys: table.column, …`: columns the data would prove keys (the pipeline's `dataKeys`). */
  dataKeys: DataKey[];
  /** The expectation, one line a call (trimmed). */
  expected: string;
}

/** A fixture file: blocks separated by blank lines; a block without SQL is commentary. */
export interface GoldenFile {
  blocks: GoldenBlock[];
}

export type GoldenBlock = { kind: 'comment'; lines: string[] } | ({ kind: 'case' } & GoldenCase);

export function goldenCases(golden: GoldenFile): GoldenCase[] {
  return golden.blocks.flatMap((block) => (block.kind === 'case' ? [block] : []));
}

export function readGoldenFile(file: string): GoldenFile {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const blocks: GoldenBlock[] = [];
  let start = 0;
  while (start < lines.length) {
    if (lines[start].trim() === '') {
      start++;
      continue;
    }
    let end = start;
    while (end < lines.length && lines[end].trim() !== '') end++;
    blocks.push(parseBlock(lines.slice(start, end), start + 1, file));
    start = end;
  }
  return { blocks };
}

function parseBlock(lines: string[], line: number, file: string): GoldenBlock {
  const sqlStart = lines.findIndex((l) => !l.trimStart().startsWith('#'));
  if (sqlStart < 0) return { kind: 'comment', lines };
  const sqlEnd = lines.findIndex((l, i) => i >= sqlStart && l.trimEnd().endsWith(';'));
  if (sqlEnd < 0) throw new Error(`${file}:${line}: a case's SQL must end with ';'`);
  const pools = lines
    .slice(0, sqlStart)
    .map((l) => /^#\s*pool:\s*(\S+)\s*$/.exec(l.trim())?.[1])
    .filter((p) => p !== undefined);
  const pool = pools.at(-1) ?? 'extended';
  if (!isPool(pool)) throw new Error(`${file}:${line}: unknown pool '${pool}'`);
  const dataKeys = lines
    .slice(0, sqlStart)
    .flatMap((l) => /^#\s*data keys:\s*(.+)$/.exec(l.trim())?.[1].split(',') ?? [])
    .map((name) => {
      const [table, column] = name.trim().split('.');
      return { table, columns: [column] };
    });
  const sql = lines
    .slice(sqlStart, sqlEnd + 1)
    .map((l) => l.trim())
    .join(' ')
    .replace(/;$/, '');
  return {
    kind: 'case',
    line,
    header: lines.slice(0, sqlEnd + 1),
    sql,
    pool,
    dataKeys,
    expected: lines
      .slice(sqlEnd + 1)
      .map((l) => l.trim())
      .join('\n'),
  };
}

function isPool(name: string): name is ToolPool {
  return name === 'extended' || name === 'paper';
}

/** The decomposer's verdict on `sql`, rendered as a golden expectation. */
export function goldenOutput(sql: string, db: DatabaseInfo, pool: ToolPool, dataKeys: DataKey[] = []): string {
  const parsed = parseQuery(sql, db);
  // A case that does not parse tests nothing of the decomposer: a broken fixture.
  if (!parsed.ok) throw new Error(`the SQL does not parse (${parsed.category}): ${parsed.message}`);
  const outcome = decompose(parsed.value, withDataKeys(db, dataKeys), pool);
  return outcome.ok ? renderSequence(outcome.value) : `rejected: ${outcome.category}`;
}

/** One call a line, `name(arg=value, ...) -> label`, then `=> ` and the answer labels. */
export function renderSequence(seq: SlotSequence): string {
  return [...seq.initialization, ...seq.calls]
    .map(renderCall)
    .concat(`=> ${seq.answerLabels.join(', ')}`)
    .join('\n');
}

function renderCall(call: ToolCall): string {
  const args = Object.entries(call.arguments).map(([name, value]) => `${name}=${renderValue(value)}`);
  return `${call.name}(${args.join(', ')}) -> ${call.label}`;
}

/**
 * JSON, less its noise: a string that reads as a name (a key, a `$LABEL$`, a word) goes
 * unquoted; anything that could be taken for a number, a keyword or punctuation stays
 * quoted, so `value="1990"` (text) and `value=1990` (integer) differ.
 */
function renderValue(value: unknown): string {
  if (typeof value === 'string') {
    return /^[A-Za-z_$][\w$.]*$/.test(value) && !['true', 'false', 'null'].includes(value)
      ? value
      : JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(renderValue).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value)
      .map(([k, v]) => `${k}: ${renderValue(v)}`)
      .join(', ')}}`;
  }
  return JSON.stringify(value);
}

/** The file with each case's expectation replaced by `actual` (by case line; others kept). */
export function writeGoldenFile(file: string, golden: GoldenFile, actual: Map<number, string>): void {
  const text = golden.blocks.map((block) => {
    if (block.kind === 'comment') return block.lines.join('\n');
    return [...block.header, actual.get(block.line) ?? block.expected].join('\n');
  });
  fs.writeFileSync(file, `${text.join('\n\n')}\n`);
}
