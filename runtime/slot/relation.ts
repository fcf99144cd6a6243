import { quoteIdent, raw, type Frag } from './sqlfrag.js';

/**
 * What the compiler knows of each output (`Rel`) and what compiling one call yields
 * (`Shape`): the model compiler.ts describes, shared by the modules of the tools.
 */

export type OutputKind = 'table' | 'list' | 'scalar';

/** One ORDER BY term over a column of the relation. */
export interface OrderTerm {
  column: string;
  descending: boolean;
}

export interface Rel {
  label: string;
  kind: OutputKind;
  cte: number;
  keys: string[];
  /** The CTE's columns in order (keys and hidden ones; a starting table may emit fewer, see StartingBody). */
  columns: string[];
  /** Columns whose values (as a tuple, NULL-safe) identify a row of `origin`. */
  identity: string[];
  /** The row order: ORDER BY terms over the columns (keys or hidden), total. */
  order: OrderTerm[];
  /** Grouped tables: the member rows (a CTE with `keys`, in `order`) and the group keys. */
  members?: { cte: number; keys: string[]; groupKeys: string[]; order: OrderTerm[] };
  /** Which identity the rows carry (label of the call that assigned it). */
  origin: string;
  /** Which ordering lineage the rows carry (label of the call that last set the order). */
  orderToken: string;
  sorted: boolean;
}

/**
 * A starting table's body, rendered last: with only the keys the rest of the statement
 * names (`used`), so SQLite parses and plans no column it does not need.
 */
export type StartingBody = (used: (key: string) => boolean) => Frag;

/**
 * A compiled call before the compiler files it: the CTE body, and the key the call
 * creates, if any. Returned rather than recorded by the tool, so that a call that fails
 * leaves the compiler untouched.
 */
export type Shape = Omit<Rel, 'label' | 'cte'> & {
  body: Frag | StartingBody;
  /** Keys the call creates (a transform's column, a join's renamed keys). */
  derived?: { key: string; description: string }[];
};

/** Columns the compiler adds start with it; keys a call names never do. */
export const HIDDEN_PREFIX = '__';

export function ascending(columns: string[]): OrderTerm[] {
  return columns.map((column) => ({ column, descending: false }));
}

export function orderBy(order: OrderTerm[]): Frag {
  return raw(order.map((t) => `${quoteIdent(t.column)}${t.descending ? ' DESC' : ''}`).join(', '));
}

/** The shape of `rel` for a tool that keeps its rows' columns, identity and order. */
export function inherit(rel: Rel): Omit<Shape, 'body' | 'kind'> {
  const { keys, columns, identity, order, members, origin, orderToken, sorted } = rel;
  return { keys, columns, identity, order, members, origin, orderToken, sorted };
}

/** A one-value output: its query yields the value as column `__v`. */
export function scalarShape(label: string, body: Frag): Shape {
  return {
    kind: 'scalar',
    keys: [],
    columns: ['__v'],
    identity: [],
    order: [],
    origin: label,
    orderToken: label,
    sorted: false,
    body,
  };
}

/** `rel` with one more column, `key`, which the call creates (transform_data, a per-group aggregate). */
export function withDerivedColumn(rel: Rel, key: string, description: string, body: Frag): Shape {
  return {
    kind: 'table',
    ...inherit(rel),
    keys: [...rel.keys, key],
    columns: [...rel.columns, key],
    body,
    derived: [{ key, description }],
  };
}
