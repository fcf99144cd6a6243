import type { DatabaseInfo, ResultSet, SlotSequence, ToolCall, ToolOutput, ToolPool } from '../../core/model.js';
import type { SqlExecutor } from '../sql/executor.js';
import { SlotCompiler, type CompiledRelation, type OutputKind } from './compiler.js';
import { LruMap } from '../../core/lru.js';
import { ToolError } from './errors.js';
import { emptyFacts, probeSourceFacts, type SourceFacts } from './source-facts.js';
import { compiledSequenceId } from './sequence-id.js';

/** Running compiled SLOT calls: a whole sequence, or a live session call by call. */

export interface RunOptions {
  timeoutMs: number;
  pool: ToolPool;
}

/** A result set as the tool output of `kind` (the shape docs/TOOLS.md gives each kind). */
export function materialize(result: ResultSet, kind: OutputKind): ToolOutput {
  switch (kind) {
    case 'scalar':
      return { kind, value: result.rows[0]?.[0] ?? null };
    case 'list':
      return { kind, values: result.rows.map((row) => row[0]) };
    case 'table':
      return { kind, columns: [...result.columns], rows: result.rows.map((row) => [...row]) };
  }
}

export async function runRelation(
  relation: CompiledRelation,
  db: DatabaseInfo,
  executor: SqlExecutor,
  timeoutMs: number,
): Promise<ToolOutput> {
  const result = await executor.run({ dbPath: db.path, sql: relation.sql, params: relation.params, timeoutMs });
  return materialize(result, relation.kind);
}

/**
 * The answer relations of a sequence, compiled once per distinct sequence: the SEL
 * formulation executes as the very SLOT calls it binds to, on fresh copies of them.
 */
const answerMemo = new LruMap<string, readonly CompiledRelation[]>(256);

async function answerRelations(
  seq: SlotSequence,
  db: DatabaseInfo,
  executor: SqlExecutor,
  opts: RunOptions,
): Promise<readonly CompiledRelation[]> {
  const id = `${compiledSequenceId(db, opts.pool, seq)}\n${JSON.stringify(seq.answerLabels)}`;
  const known = answerMemo.get(id);
  if (known) return known;
  const facts = emptyFacts();
  await probeSourceFacts(db, opts.pool, seq.initialization, executor, opts.timeoutMs, facts);
  const compiler = new SlotCompiler(db, opts.pool, facts);
  for (const call of seq.initialization) compiler.define(call, { initialization: true });
  for (const call of seq.calls) compiler.define(call);
  const labels = new Set(compiler.labels());
  const relations = seq.answerLabels.map((label) => {
    if (!labels.has(label))
      throw new ToolError('bad_reference', label, `answer label "${label}" is not the label of any call`);
    return compiler.relation(label);
  });
  answerMemo.set(id, relations);
  return relations;
}

/** The outputs of `seq.answerLabels`, in order. Throws ToolError for an invalid sequence. */
export async function executeSequence(
  seq: SlotSequence,
  db: DatabaseInfo,
  executor: SqlExecutor,
  opts: RunOptions,
): Promise<ToolOutput[]> {
  return runRelations(await answerRelations(seq, db, executor, opts), db, executor, opts.timeoutMs);
}

/** Each relation's output, in order (one statement at a time: an answer's parts share the SQL workers with other items). */
async function runRelations(
  relations: readonly CompiledRelation[],
  db: DatabaseInfo,
  executor: SqlExecutor,
  timeoutMs: number,
): Promise<ToolOutput[]> {
  const outputs: ToolOutput[] = [];
  for (const relation of relations) outputs.push(await runRelation(relation, db, executor, timeoutMs));
  return outputs;
}

/** The rows of an output wanted: at most `maxRows`, after the first `offset` (0 if not given). */
export interface OutputPage {
  maxRows: number;
  offset?: number;
}

/**
 * Step-by-step use (a model calling tools live): each call is compiled against the
 * outputs so far and executed. A rejected call leaves the session as it was.
 */
export class ToolSession {
  private readonly compiler: SlotCompiler;
  /** Shared with the compiler: probed before each initialization compiles. */
  private readonly facts: SourceFacts = emptyFacts();

  constructor(
    readonly db: DatabaseInfo,
    private readonly executor: SqlExecutor,
    private readonly opts: RunOptions,
  ) {
    this.compiler = new SlotCompiler(db, opts.pool, this.facts);
  }

  /**
   * Compiles a call into the session without running it (a starting table given, not asked
   * for). `initialization`: whether it may be `initialize_active_data` (by default, when it is
   * one); false compiles it as a sequence's call, which refuses that tool as executeSequence does.
   */
  async define(toolCall: ToolCall, initialization = toolCall.name === 'initialize_active_data'): Promise<void> {
    if (initialization)
      await probeSourceFacts(this.db, this.opts.pool, [toolCall], this.executor, this.opts.timeoutMs, this.facts);
    this.compiler.define(toolCall, { initialization });
  }

  /**
   * `preview`: only the output's first rows are needed (what a model is shown): the query
   * stops there instead of carrying a whole intermediate table back. A scalar is whole.
   */
  async call(toolCall: ToolCall, preview?: OutputPage): Promise<ToolOutput> {
    await this.define(toolCall);
    return this.output(toolCall.label, preview);
  }

  /**
   * The output of a call defined earlier (its first `preview.maxRows` rows; from `preview.offset`
   * on, rows before it skipped: a page).
   */
  output(label: string, preview?: OutputPage): Promise<ToolOutput> {
    const relation = this.compiler.relation(label);
    const offset = Math.max(0, Math.floor(preview?.offset ?? 0));
    const limited =
      preview && relation.kind !== 'scalar'
        ? {
            ...relation,
            sql: `SELECT * FROM (${relation.sql}) LIMIT ${Math.max(0, Math.floor(preview.maxRows))}${offset ? ` OFFSET ${offset}` : ''}`,
          }
        : relation;
    return runRelation(limited, this.db, this.executor, this.opts.timeoutMs);
  }

  /**
   * The whole outputs of `labels`, in order: what `executeSequence` answers for a sequence of
   * the calls defined so far, from the SQL already compiled here (the same statements: one
   * compiler, the same calls in the same order) instead of compiling them all again.
   */
  answer(labels: readonly string[]): Promise<ToolOutput[]> {
    const relations = labels.map((label) => this.compiler.relation(label));
    return runRelations(relations, this.db, this.executor, this.opts.timeoutMs);
  }

  /** How many rows (a list: values) the output of a call defined earlier has; a scalar is one. */
  async size(label: string): Promise<number> {
    const relation = this.compiler.relation(label);
    if (relation.kind === 'scalar') return 1;
    const counted = { ...relation, kind: 'scalar' as const, sql: `SELECT count(*) FROM (${relation.sql})` };
    const output = await runRelation(counted, this.db, this.executor, this.opts.timeoutMs);
    return Number((output as { value: unknown }).value);
  }

  /** Labels answered so far (initialization included). */
  labels(): string[] {
    return this.compiler.labels();
  }
}
