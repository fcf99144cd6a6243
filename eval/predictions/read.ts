import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { sha256 } from '../../core/hash.js';
import { DatasetError } from '../dataset.js';
import type { PredictionFormat, RecordCalls } from './formats.js';
import { vakraRecordCalls } from './vakra.js';

/**
 * Another agent's predictions, read for `nl2api eval --predictions`: each item's calls, by the
 * item's id (a sample's `sample_id`), whatever ran the agent (VAKRA's runner, LangGraph, an
 * MCP client of `nl2api mcp`). The calls are replayed through the live tools and scored as a
 * model's reply would be. Formats:
 *
 * - `nl2api`: JSON Lines (or a JSON array), one record per item: `{id, calls: [...]}`; also
 *   read are a published sample (`{sample_id, output}`: the dataset's own files are gold
 *   predictions) and an eval result line (`{id, attempt: {parsed}}`). A call is
 *   `{name, arguments, label?, id?}`; references as `"$<label or id>$"` (call-names.ts).
 * - `vakra`: IBM VAKRA's runner output, one `<domain>.json` per database (vakra.ts).
 *
 * A path is a file or a folder of them (`*.jsonl` / `*.json`, not recursive). A record that
 * cannot be read is listed with its reason and never stops the rest.
 */

export interface Predictions {
  /** Item id → the calls the agent made, as it wrote them. */
  calls: Map<string, unknown[]>;
  /** Records that could not be read: where, and why. */
  invalid: string[];
  /** Ids given more than once (the first record is kept). */
  duplicates: string[];
  /** sha256 of the files read: the attempts' cache key (a changed file is replayed again). */
  hash: string;
}

export async function readPredictions(location: string, format: PredictionFormat): Promise<Predictions> {
  const files = await predictionFiles(location);
  const calls = new Map<string, unknown[]>();
  const invalid: string[] = [];
  const duplicates: string[] = [];
  const texts: string[] = [];
  for (const file of files) {
    const text = await readFile(file, 'utf8');
    texts.push(text);
    const name = path.basename(file);
    recordsOf(text).forEach((record, i) => {
      const read =
        'error' in record
          ? record
          : format === 'vakra'
            ? vakraRecordCalls(record.value)
            : nl2apiRecordCalls(record.value);
      if ('error' in read) invalid.push(`${name} record ${i + 1}: ${read.error}`);
      else if (calls.has(read.id)) duplicates.push(read.id);
      else calls.set(read.id, read.calls);
    });
  }
  return { calls, invalid, duplicates, hash: sha256(JSON.stringify([format, texts])) };
}

async function predictionFiles(location: string): Promise<string[]> {
  const info = await stat(location).catch(() => {
    throw new DatasetError(`--predictions ${location}: no such file or folder`);
  });
  if (!info.isDirectory()) return [location];
  const files = (await readdir(location))
    // VAKRA's runner writes each domain's tool list beside its predictions, as `<domain>_tools.json`.
    .filter((f) => (f.endsWith('.jsonl') || f.endsWith('.json')) && !f.endsWith('_tools.json'))
    .sort()
    .map((f) => path.join(location, f));
  if (files.length === 0) throw new DatasetError(`--predictions ${location}: no .json or .jsonl files in the folder`);
  return files;
}

/** A JSON array (or one object), else JSON Lines, each line read on its own. */
function recordsOf(text: string): ({ value: unknown } | { error: string })[] {
  const trimmed = text.trim();
  if (trimmed === '') return [];
  try {
    const whole = JSON.parse(trimmed) as unknown;
    return (Array.isArray(whole) ? (whole as unknown[]) : [whole]).map((value) => ({ value }));
  } catch {
    return trimmed
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => {
        try {
          return { value: JSON.parse(line) as unknown };
        } catch {
          return { error: 'not JSON' };
        }
      });
  }
}

function nl2apiRecordCalls(record: unknown): RecordCalls {
  if (record === null || typeof record !== 'object') return { error: 'not an object' };
  const r = record as Record<string, unknown>;
  const id = r.id ?? r.sample_id;
  if (typeof id !== 'string' && typeof id !== 'number') return { error: 'no "id" (or "sample_id")' };
  const attempt = r.attempt as { parsed?: unknown } | null | undefined;
  const calls = r.calls ?? r.output ?? attempt?.parsed;
  if (!Array.isArray(calls))
    return { error: `"${String(id)}": no list of calls ("calls", "output" or "attempt.parsed")` };
  return { id: String(id), calls: calls as unknown[] };
}
