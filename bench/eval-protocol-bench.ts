import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseConfig } from '../config/load.js';
import { EVAL_DEFAULTS } from '../config/schema.js';
import type { Formulation, ToolCall } from '../core/model.js';
import { loadEvalDataset } from '../eval/dataset.js';
import type { EvalModel } from '../eval/models/model.js';
import { runEval, type EvalOptions } from '../eval/run.js';
import type { ResultLine } from '../eval/summary.js';
import { goldAnswers, startChatServer } from './scripted-chat.js';
import { writeVakraPredictions } from './vakra-gold.js';

/**
 * Whether the evaluation measures models the way they really answer (issue 31), on a
 * generated BIRD dev output:
 * - native tools: a scripted OpenAI-compatible model answering with the gold calls as native
 *   tool calls (ids, no labels, references by id; ReAct: one call per turn, references by the
 *   handle each result gave), direct and ReAct, per formulation: completion (target >= 99%)
 *   and the share without error;
 * - the first tool renamed on every item: mean slot F1 over the items of two or more gold calls
 *   (target >= 0.99: the alignment must not pair a call with the wrong one of two namesakes);
 * - --obfuscate with a model that answers in the real names: completion (target <= 5%);
 * - --predictions made from the gold calls, nl2api's format and VAKRA's runner output:
 *   completion 1 on what each can express, and ten items taken out ten fewer completed.
 */

export const NATIVE_TARGET = 0.99;
export const RENAMED_SLOT_F1_TARGET = 0.99;
export const OBFUSCATED_TARGET = 0.05;

type Figures = Awaited<ReturnType<typeof protocolBench>>;

export function protocolLines(figures: Figures): string[] {
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  const lines: string[] = [];
  for (const n of figures.native)
    lines.push(
      `eval native tools ${n.formulation.toUpperCase()} ${n.mode}${n.budget ? ` (budget ${n.budget})` : ''} (scripted model: gold as native calls, ids, no labels): ${n.items} items, completion ${pct(n.completion)} (target >= ${pct(NATIVE_TARGET)}), ${pct(n.errorFree)} without error, ${n.requests} requests`,
    );
  for (const r of figures.renamedFirst)
    lines.push(
      `eval first tool renamed ${r.formulation.toUpperCase()}: mean slot F1 ${r.slotF1.toFixed(4)} over ${r.items} items of >= 2 gold calls (target >= ${RENAMED_SLOT_F1_TARGET}), intent F1 ${r.intentF1.toFixed(3)}`,
    );
  for (const o of figures.obfuscated)
    lines.push(
      `eval --obfuscate, model answering in the real names ${o.formulation.toUpperCase()}: completion ${pct(o.completion)} of ${o.items} (target <= ${pct(OBFUSCATED_TARGET)}); ${o.hallucinated} hallucinated_func_name`,
    );
  for (const p of figures.predictions)
    lines.push(
      `eval --predictions ${p.format} ${p.formulation.toUpperCase()}: ${p.written} of ${p.items} items written, ${p.completed} completed (completion over written ${pct(p.completed / p.written)}); 10 taken out: ${p.completedCut} completed (${p.completed - p.completedCut} fewer)`,
    );
  return lines;
}

export async function protocolBench(datasets: Partial<Record<Formulation, string>>, birdDir: string) {
  const work = mkdtempSync(path.join(os.tmpdir(), 'nl2api-protocol-bench-'));
  let runs = 0;
  const options = (dataset: string, formulation: Formulation, extra: Partial<EvalOptions>): EvalOptions => ({
    config: parseConfig({ source: birdDir, progress: 'none', concurrency: 16 }),
    ...EVAL_DEFAULTS,
    dataset,
    formulation,
    models: ['oracle'],
    report: path.join(work, `run-${++runs}`),
    ...extra,
  });
  const completedOf = (lines: readonly ResultLine[]) => lines.filter((l) => l.attempt?.scores.completed).length;
  try {
    const native = [];
    const renamedFirst = [];
    const obfuscated = [];
    const predictions = [];
    for (const [formulation, dataset] of Object.entries(datasets) as [Formulation, string][]) {
      const items = (await loadEvalDataset(dataset, { formulation })).items;
      const server = await startChatServer({ answers: goldAnswers(items) });
      try {
        // One call per turn: the longest gold must fit in the turn budget, with its final answer.
        const budget = Math.max(EVAL_DEFAULTS.budget, 1 + Math.max(...items.map((i) => i.goldCalls.length)));
        for (const mode of ['direct', 'react'] as const) {
          const before = server.requests.length;
          const run = await runEval(
            options(dataset, formulation, {
              models: [`openai:scripted@${server.url}/v1`],
              tools: 'native',
              mode,
              budget,
            }),
          );
          const [summary] = run.summary.models;
          native.push({
            formulation,
            mode,
            budget: mode === 'react' ? budget : null,
            items: summary.attempts,
            completion: summary.completion.mean,
            errorFree: summary.errors.none / summary.attempts,
            failed: summary.failed,
            requests: server.requests.length - before,
          });
        }
      } finally {
        await server.close();
      }
      if (formulation !== 'rest') {
        const renamed = await runEval(
          options(dataset, formulation, {
            models: ['renamed-first'],
            extraModels: { 'renamed-first': renamedFirstModel() },
          }),
        );
        const chained = renamed.lines.filter((l) => l.goldCalls.length >= 2 && l.attempt);
        const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
        renamedFirst.push({
          formulation,
          items: chained.length,
          slotF1: mean(chained.map((l) => l.attempt!.scores.slot.f1)),
          intentF1: mean(chained.map((l) => l.attempt!.scores.intent.f1)),
        });
      }
      const real = await runEval(
        options(dataset, formulation, {
          models: ['real-names'],
          obfuscate: true,
          extraModels: { 'real-names': realNamesModel() },
        }),
      );
      obfuscated.push({
        formulation,
        items: real.summary.models[0].attempts,
        completion: real.summary.models[0].completion.mean,
        hallucinated: real.summary.models[0].errors.hallucinated_func_name,
      });
      for (const format of ['nl2api', 'vakra'] as const) {
        const write = (name: string, keep: (id: string) => boolean) =>
          format === 'vakra'
            ? {
                dir: path.join(work, name),
                written: writeVakraPredictions(dataset, formulation, path.join(work, name), keep),
              }
            : writeGoldPredictions(dataset, formulation, path.join(work, name), keep);
        const replay = async (dir: string) =>
          (await runEval(options(dataset, formulation, { predictions: { path: dir, format } }))).lines;
        const all = write(`${format}-${formulation}`, () => true);
        const completed = (await replay(all.dir)).filter((l) => l.attempt?.scores.completed).map((l) => l.id);
        // Ten of the items that completed, taken out.
        const cut = new Set(completed.slice(5, 15));
        const fewer = write(`${format}-${formulation}-cut`, (id) => !cut.has(id));
        predictions.push({
          format,
          formulation,
          items: items.length,
          written: all.written,
          completed: completed.length,
          completedCut: completedOf(await replay(fewer.dir)),
        });
      }
    }
    return {
      targets: { native: NATIVE_TARGET, renamedSlotF1: RENAMED_SLOT_F1_TARGET, obfuscated: OBFUSCATED_TARGET },
      native,
      renamedFirst,
      obfuscated,
      predictions,
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The gold calls with the first one's tool renamed to one no universe has; everything else exact. */
function renamedFirstModel(): EvalModel {
  return scriptedModel('renamed-first', (gold) =>
    gold.map((c, i) => (i === 0 ? { ...c, name: 'fetch_everything_now' } : c)),
  );
}

/** The gold calls in the dataset's names, whatever names the prompt showed (--obfuscate). */
function realNamesModel(): EvalModel {
  return scriptedModel('real-names', (gold) => gold);
}

function scriptedModel(id: string, answer: (gold: ToolCall[]) => ToolCall[]): EvalModel {
  return {
    id,
    family: 'gpt',
    readsPrompt: true,
    respond: (turn) => Promise.resolve({ content: JSON.stringify(answer(turn.item.goldCalls)), cached: false }),
  };
}

/** The published samples `keep` keeps, as nl2api predictions (`{id, calls}` lines). */
function writeGoldPredictions(
  dataset: string,
  formulation: string,
  file: string,
  keep: (id: string) => boolean,
): { dir: string; written: number } {
  const lines = readdirSync(path.join(dataset, formulation))
    .filter((f) => f.endsWith('.jsonl'))
    .flatMap((f) =>
      readFileSync(path.join(dataset, formulation, f), 'utf8')
        .split('\n')
        .filter(Boolean),
    )
    .map((line) => JSON.parse(line) as { sample_id: string; output: unknown[] })
    .filter((r) => keep(r.sample_id))
    .map((r) => JSON.stringify({ id: r.sample_id, calls: r.output }));
  writeFileSync(`${file}.jsonl`, lines.join('\n'));
  return { dir: `${file}.jsonl`, written: lines.length };
}

// node dist/bench/eval-protocol-bench.js <slot,sel output> <rest output> <bird dir>
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [sequences, rest, bird] = process.argv.slice(2);
  const figures = await protocolBench({ slot: sequences, sel: sequences, rest }, bird);
  process.stdout.write(`${protocolLines(figures).join('\n')}\n`);
}
