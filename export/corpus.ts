import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Formulation } from '../core/model.js';
import { FORMULATIONS } from '../core/model.js';
import { DatasetError, loadEvalDataset, type EvalDataset, type EvalItem } from '../eval/dataset.js';

/**
 * The samples an export starts from: one or more generated output folders (`--from`), each
 * read with evaluation's loader (so the question, gold calls, gold answer and the tool
 * universe a model is offered are read one way everywhere), every sample tagged with where it
 * came from. A source's name is its dataset's name, made unique when two sources share one.
 */

export interface CorpusSource {
  name: string;
  dir: string;
  dataset: string;
  /** Where its databases are (`--source`): needed to run the gold calls for their outputs. */
  databases: string;
  /** How many times each of its samples is meant to appear in the mixture (`--weight`). */
  weight: number;
}

export interface CorpusItem {
  /** `<source>/<formulation>/<db>/<sample id>`: unique in an export. */
  key: string;
  /**
   * `<source>/<db>/<sample id>`: one question of one source, whatever its formulation.
   * Negatives and weighted copies are decided per unit, so its formulations agree.
   */
  unit: string;
  source: CorpusSource;
  item: EvalItem;
}

export interface Corpus {
  sources: CorpusSource[];
  /** Per source and formulation, the dataset as loaded (its databases and REST endpoints). */
  datasets: { source: CorpusSource; dataset: EvalDataset }[];
  items: CorpusItem[];
}

export interface CorpusInput {
  dir: string;
  databases: string;
  weight: number;
}

export async function loadCorpus(
  inputs: readonly CorpusInput[],
  formulations: readonly Formulation[] | undefined,
): Promise<Corpus> {
  const sources: CorpusSource[] = [];
  const datasets: Corpus['datasets'] = [];
  const items: CorpusItem[] = [];
  for (const input of inputs) {
    const dir = path.resolve(input.dir);
    const dataset = await datasetName(dir);
    const taken = new Set(sources.map((s) => s.name));
    let name = dataset;
    for (let n = 2; taken.has(name); n++) name = `${dataset}-${n}`;
    const source: CorpusSource = { name, dir, dataset, databases: path.resolve(input.databases), weight: input.weight };
    sources.push(source);
    const wanted = formulations ?? (await presentFormulations(dir));
    for (const formulation of wanted) {
      const loaded = await loadEvalDataset(dir, { formulation });
      datasets.push({ source, dataset: loaded });
      for (const item of loaded.items)
        items.push({ key: `${name}/${item.key}`, unit: `${name}/${item.db}/${item.id}`, source, item });
    }
  }
  return { sources, datasets, items };
}

async function datasetName(dir: string): Promise<string> {
  const text = await readFile(path.join(dir, 'manifest.json'), 'utf8').catch(() => {
    throw new DatasetError(`${dir} has no manifest.json: is it the output folder of nl2api generate?`);
  });
  try {
    return (JSON.parse(text) as { dataset: string }).dataset;
  } catch {
    throw new DatasetError(`${dir}/manifest.json is not valid JSON`);
  }
}

/** The formulations an output folder has samples of that an export writes (`--formulations` not given). */
async function presentFormulations(dir: string): Promise<Formulation[]> {
  const present: Formulation[] = [];
  for (const formulation of FORMULATIONS) {
    const files = await readdir(path.join(dir, formulation)).catch(() => [] as string[]);
    if (files.some((file) => file.endsWith('.jsonl'))) present.push(formulation);
  }
  if (present.length === 0) throw new DatasetError(`${dir} has no samples of any formulation`);
  return present;
}
