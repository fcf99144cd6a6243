import type { DatabaseInfo, Verdict } from '../core/model.js';
import { runGold } from '../generators/sql/gold.js';
import type { LlmMessage } from '../generators/llm/messages.js';
import { loadPrompt } from '../generators/rest/prompts.js';
import type { SqlExecutor } from '../runtime/sql/executor.js';
import { judgeOutputs } from './answer.js';
import type { AttemptRecord } from './attempt.js';
import type { EvalItem } from './dataset.js';
import type { EvalModel } from './models/model.js';
import { scoreAttempt } from './score.js';

/**
 * `--sql-baseline` (Live API-Bench B.3): the model writes SQL against the database itself,
 * and its completion rate stands beside the API one. The query runs exactly as gold SQL does
 * (generators/sql/gold.ts: read-only, one statement, a timeout, BIRD's double-quoted strings
 * resolved, the clock pinned to the dataset's reference time) and its rows are compared with
 * the gold answer under the same rules.
 */

export interface SqlAttemptInput {
  item: EvalItem;
  model: EvalModel;
  db: DatabaseInfo;
  executor: SqlExecutor;
  timeoutMs: number;
  referenceTime: string;
  repeat: number;
}

export async function runSqlAttempt(input: SqlAttemptInput): Promise<AttemptRecord> {
  const { item, model } = input;
  const messages = model.readsPrompt ? sqlPrompt(item, input.db) : [];
  const reply = await model.respond({
    item,
    messages,
    tools: [],
    native: false,
    step: 0,
    mode: 'sql',
    repeat: input.repeat,
    budget: 1,
    rename: (call) => call,
  });
  const sql = sqlOf(reply.content);
  let answer: Verdict;
  if (!sql) {
    answer = { ok: false, category: 'instruction_alignment_failure', message: 'no SQL in the reply' };
  } else {
    const instance = {
      id: item.id,
      index: 0,
      dbId: item.db,
      question: item.question,
      evidence: item.evidence,
      sql,
      difficulty: item.difficulty,
    };
    const ran = await runGold(instance, input.db, input.executor, input.timeoutMs, input.referenceTime);
    answer = ran.ok
      ? judgeOutputs([{ kind: 'table', columns: ran.value.columns, rows: ran.value.rows }], item.gold)
      : { ok: false, category: `execution:${ran.category}`, message: ran.message };
  }
  return {
    model: model.id,
    mode: 'sql',
    promptHash: null,
    replies: [reply],
    parsed: null,
    sql: sql ?? undefined,
    steps: [],
    scores: scoreAttempt({ predicted: [], gold: [], tools: [], answer }),
  };
}

/** The SQL of a reply: its first ```sql (or bare ```) block, else the whole text; one trailing `;` dropped. */
export function sqlOf(text: string): string | null {
  const fenced = /```(?:sql|sqlite)?\s*\n?([\s\S]*?)```/i.exec(text);
  const sql = (fenced ? fenced[1] : text).trim().replace(/;\s*$/, '');
  return sql === '' ? null : sql;
}

/** The SQL prompt's template texts (part of each SQL attempt's key). */
export function sqlPromptSource(): string {
  const template = loadPrompt('eval-sql');
  return template.system + template.user;
}

function sqlPrompt(item: EvalItem, db: DatabaseInfo): LlmMessage[] {
  return loadPrompt('eval-sql').render({
    schema: schemaText(db),
    question: item.question,
    evidence: item.evidence || '(none)',
  });
}

/** CREATE TABLE statements with each column's description as a comment. */
function schemaText(db: DatabaseInfo): string {
  return db.tables
    .map((table) => {
      const columns = table.columns.map((c) => {
        const note = c.description && c.description !== c.name ? ` -- ${c.description}` : '';
        return `  "${c.name}" ${c.type}${note}`;
      });
      return `CREATE TABLE "${table.name}" (\n${columns.join(',\n')}\n);`;
    })
    .join('\n');
}
