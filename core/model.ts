/**
 * The data that flows between stages. Every stage's input and output is plain JSON-able
 * data built from these types, so that it can be hashed, cached and sent over a queue.
 */

/** A value as SQLite returns it. BLOBs are carried as `x'<hex>'` strings. */
export type SqlValue = number | string | null;

export interface ColumnInfo {
  name: string;
  /** Declared type, as in the schema (`integer`, `text`, `REAL`, ...). */
  type: string;
  /** From the dataset's column descriptions; falls back to the column name. */
  description: string;
  /** BIRD's `value_description`, empty when absent. */
  valueDescription: string;
  /** The collation the column declares, when it is not BINARY (`NOCASE`, `RTRIM`, …). */
  collation?: string;
  /** Declared NOT NULL: the column never holds NULL (a response field over it is not nullable). */
  notNull?: boolean;
}

export interface ForeignKey {
  column: string;
  refTable: string;
  refColumn: string;
}

export interface TableInfo {
  name: string;
  columns: ColumnInfo[];
  primaryKey: string[];
  /** UNIQUE constraints and unique indexes over plain columns (NULLs may repeat in them). */
  uniqueKeys?: string[][];
  /**
   * Column sets no row of the data repeats and none holds NULL in, though the schema declares
   * no key over them: proven on the database (pipeline/data-keys.ts) for one decomposition,
   * never ingested with the schema.
   */
  dataKeys?: string[][];
  foreignKeys: ForeignKey[];
}

export interface DatabaseInfo {
  dbId: string;
  /** Absolute path of the SQLite file. */
  path: string;
  /** Content hash of the SQLite file: part of every cache key that reads the database. */
  fingerprint: string;
  tables: TableInfo[];
}

/** One NL2SQL question as ingested. */
export interface Instance {
  /** Stable id, unique in the source (BIRD: the question_id as a string). */
  id: string;
  /** Position in the source file: the order of every emitted file. */
  index: number;
  dbId: string;
  question: string;
  evidence: string;
  sql: string;
  difficulty: string | null;
}

export interface ResultSet {
  columns: string[];
  rows: SqlValue[][];
}

export interface GoldResult extends ResultSet {
  /** The SQL actually executed (double-quoted string literals rewritten). */
  executedSql: string;
  /** The top-level query has ORDER BY: row order is part of the answer. */
  ordered: boolean;
  /** The top-level query is SELECT DISTINCT. */
  distinct: boolean;
  /**
   * When the SQL reads the clock ('now', CURRENT_TIMESTAMP, …): the moment it ran (ISO 8601),
   * the reference time its answer holds for. Cached with the answer, so a rerun keeps both.
   */
  referenceTime?: string;
  /**
   * The gold's answers on the run's database variants (differential verification), in the
   * order the variants are configured: every answer acceptable on each. A sample must give
   * one of them on each variant.
   */
  variants?: GoldOnVariant[];
  /** What agreement with this gold proves (verifiers/differential.ts). */
  strength?: GoldStrength;
  /**
   * Nondeterministic gold kept (config `verification.nondeterministicGold: accept`): every
   * answer the gold SQL gave on the database's own rows; `rows` is the first of them.
   */
  acceptable?: SqlValue[][][];
  /** Rows tied on the sort keys of an `ORDER BY … LIMIT` answer: any of a group may stand at its positions. */
  ties?: Ties;
  /**
   * The answer is the same whatever plan runs the query and in whatever order it reads rows:
   * proven from the SQL (generators/sql/row-order.ts), and under ORDER BY no two rows of the
   * answer tie on the sort keys (its tie probe). So a run of the same query made another way
   * (a REST endpoint with the question's values bound) answers these rows, in this order
   * where it has one. Recorded where the gold ran on variants.
   */
  fixedAnswer?: true;
  /**
   * How long the gold SQL took when it ran (ms, waiting for a SQL worker included): what its
   * question costs, the measure of a REST proposal's trial run. A measurement, not part of
   * the answer: no cache key holds it.
   */
  elapsedMs?: number;
}

/**
 * The tie groups of an ordered, limited answer (generators/sql/ties.ts): `positions[i]` is
 * the group (index into `groups`) whose rows may stand at answer row i.
 */
export interface Ties {
  groups: SqlValue[][][];
  positions: number[];
}

export interface GoldOnVariant {
  variant: string;
  /** The answers acceptable on this variant (more than one when its rows tie differently when read in another order). */
  answers: SqlValue[][][];
  ties?: Ties;
  /**
   * The gold's LIMIT window is open here (verifiers/ties.ts, `TieReading.open`): which rows it
   * keeps is the plan's arbitrary pick among others its tie groups cannot list. Such a variant
   * decides nothing: neither whether a sample agrees (checkDifferential) nor the gold's strength.
   */
  open?: true;
}

/**
 * `empty`: no rows; `trivial`: one row of zeros and NULLs; `discriminating`: the answer
 * changes on some value-perturbed variant; `insensitive`: it changes on none.
 */
export type GoldStrength = 'empty' | 'trivial' | 'insensitive' | 'discriminating';

export interface ToolCall {
  name: string;
  arguments: Record<string, unknown>;
  label: string;
}

/** What a tool call returns (docs/TOOLS.md, "Output kinds"). */
export type ToolOutput =
  | { kind: 'scalar'; value: SqlValue }
  | { kind: 'list'; values: SqlValue[] }
  | { kind: 'table'; columns: string[]; rows: SqlValue[][] };

export interface SlotSequence {
  /** initialize_active_data calls (`starting_table_var`, `starting_table_var_2`, ...). */
  initialization: ToolCall[];
  calls: ToolCall[];
  /** Labels whose outputs, zipped column-wise in this order, form the answer. */
  answerLabels: string[];
  /**
   * The keys the data proved and the decomposition relied on (a column selected beside
   * GROUP BY that only they determine): verification proves them again on every variant.
   */
  dataDependencies?: DataKey[];
}

/**
 * Columns of a table that are unique and non-NULL on every row of the data, without a
 * declared key; with `values` (a selection key), only these values of them: at most one row
 * of the table holds them all (`WHERE name = 'Ann'` picks one row, though names repeat).
 */
export interface DataKey {
  table: string;
  columns: string[];
  values?: (string | number)[];
}

/** OpenAI function-calling format. */
export interface ToolSpec {
  type: 'function';
  function: {
    name: string;
    description: string;
    parameters: Record<string, unknown>;
  };
}

/** How a SEL tool maps back onto a SLOT tool: the SLOT tool and the arguments it binds. */
export interface SelBinding {
  slotTool: string;
  boundArguments: Record<string, unknown>;
}

/** A column key with its model-facing description (what the key enums of tool specs list). */
export interface KeyDescription {
  key: string;
  description: string;
}

/**
 * The instance's tool universe is `bindings` (tool names in universe order, each with the
 * SLOT tool and arguments it binds) over its key universe: the keys of its starting table
 * (a function of the database and `initialization`) followed by `derivedKeys`, the keys its
 * calls derive that the starting table lacks. Specs are a pure function of those and the
 * tool pool, built when needed (pipeline/tool-registry.ts) rather than carried along
 * (~45 KB per sequence).
 */
export interface SelSequence extends SlotSequence {
  bindings: Record<string, SelBinding>;
  derivedKeys: KeyDescription[];
}

/** The formulations, in canonical order (pipeline/formulations.ts has what each one is made of). */
export const FORMULATIONS = ['slot', 'sel', 'rest', 'chain'] as const;
export type Formulation = (typeof FORMULATIONS)[number];
/** REST, and what is made of REST's samples: the formulations whose tools are the REST endpoints. */
export const REST_BASED = ['rest', 'chain'] as const satisfies readonly Formulation[];
export const callsRest = (formulation: Formulation): boolean =>
  (REST_BASED as readonly Formulation[]).includes(formulation);
/** The tool-sequence formulations, run by the SLOT/SEL item flow (pipeline/runner/flow.ts). */
export const SEQUENCE_FORMULATIONS = ['slot', 'sel'] as const;
export type SequenceFormulation = (typeof SEQUENCE_FORMULATIONS)[number];

/** Canonical order (slot, sel, rest), whatever order the config lists them in. */
export function orderedFormulations(formulations: readonly Formulation[]): Formulation[] {
  return FORMULATIONS.filter((f) => formulations.includes(f));
}

/** The sequence formulations among these, in canonical order. */
export function sequenceFormulations(formulations: readonly Formulation[]): SequenceFormulation[] {
  return orderedFormulations(formulations).filter((f): f is SequenceFormulation =>
    (SEQUENCE_FORMULATIONS as readonly Formulation[]).includes(f),
  );
}

export type ToolPool = 'paper' | 'extended';

/** A categorized verdict of one check (BFCL style). */
export interface Verdict {
  ok: boolean;
  /** `format:<why>`, `execution:<why>`, `semantic:<why>` on failure; the deciding rule on success. */
  category: string;
  message: string;
}

export interface Rejection {
  id: string;
  db: string;
  formulation: Formulation | 'all';
  stage: string;
  category: string;
  message: string;
}
