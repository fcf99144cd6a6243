import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { vakraHandlePrefix } from '../eval/predictions/vakra.js';

/**
 * A generated dataset's gold calls written as IBM VAKRA's runner writes an agent's calls
 * (benchmark/runner_helpers.py: one `<domain>.json` per database, records `{uuid, domain,
 * status, error, duration_s, output: [{turn_id, query, answer, sequence: {tool_call}}]}`,
 * calls `{name, arguments}` with VAKRA's names, tables passed on by the handles VAKRA's
 * server gives them), for what VAKRA's tools can express: what `--predictions-format vakra`
 * is measured and tested on. Handles are named by the reader's rule (vakraHandlePrefix),
 * which the reader's test checks against a record written by hand after VAKRA's own naming.
 */

export interface GoldCall {
  name: string;
  arguments: Record<string, unknown>;
  label: string;
}

/**
 * Gold VAKRA's handles can carry: one starting table, and every output a later call uses is a
 * table VAKRA names (its aggregates are scalars, its retrieve a table and not a list for an
 * "in" filter), passed as the data source. Joins of two starting tables, group-bys and
 * subqueries are nl2api's own, and so is reading a column after a transform of it. REST calls
 * are operationIds, VAKRA's as they are.
 */
export function vakraExpressible(calls: readonly GoldCall[]): boolean {
  const tables = new Set(['starting_table_var']);
  // VAKRA's transform rewrites its column in place: a later call cannot read the original.
  const rewritten = new Set<string>();
  return calls.every((call) => {
    if (typeof call.arguments.key_name === 'string' && rewritten.has(call.arguments.key_name)) return false;
    if (call.name.startsWith('transform_data') && typeof call.arguments.key_name === 'string')
      rewritten.add(call.arguments.key_name);
    const ok = Object.entries(call.arguments).every(([name, value]) => {
      if (!/\$[^$]+\$/.test(JSON.stringify(value))) return true;
      const handle = typeof value === 'string' && /^\$([^.$]+)\$$/.exec(value);
      return /data_source$/.test(name) && !!handle && tables.has(handle[1]);
    });
    if (vakraHandlePrefix(call.name)) tables.add(call.label);
    return ok;
  });
}

/** Gold calls as VAKRA's runner records them: VAKRA's names where it has the tool, handles for references. */
export function asVakraCalls(
  calls: readonly GoldCall[],
  db: string,
): { name: string; arguments: Record<string, unknown> }[] {
  const counters = new Map([['retrieved', 1]]);
  const handles = new Map([['starting_table_var', `retrieved_${db}_1`]]);
  return calls.map((call) => {
    const args: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(call.arguments)) {
      const reference = typeof value === 'string' && /^\$([^.$]+)\$$/.exec(value);
      args[VAKRA_ARGUMENTS[name] ?? name] = reference && handles.has(reference[1]) ? handles.get(reference[1]) : value;
    }
    const aggregate = /^aggregate_data_(\w+)$/.exec(call.name);
    const getter = /^get_(\w+)$/.exec(call.name);
    const name = aggregate ? `compute_data_${aggregate[1]}` : getter ? `get_${getter[1]}s` : call.name;
    const prefix = vakraHandlePrefix(call.name);
    if (prefix) {
      const n = (counters.get(prefix) ?? 0) + 1;
      counters.set(prefix, n);
      handles.set(call.label, `${prefix}_${db}_${n}`);
    }
    return { name, arguments: args };
  });
}

const VAKRA_ARGUMENTS: Record<string, string> = {
  data_source: 'data_label',
  other_data_source: 'data_label_2',
  aggregation_type: 'aggregation_operation',
};

/**
 * `<dir>/<db>.json` for each database of `<dataset>/<formulation>/`: the items VAKRA can
 * express and `keep` keeps (with each domain's `<db>_tools.json` beside it, as the runner
 * writes). Returns how many records were written.
 */
export function writeVakraPredictions(
  dataset: string,
  formulation: string,
  dir: string,
  keep: (id: string) => boolean = () => true,
): number {
  mkdirSync(dir, { recursive: true });
  let written = 0;
  for (const file of readdirSync(path.join(dataset, formulation)).filter((f) => f.endsWith('.jsonl'))) {
    const db = file.replace(/\.jsonl$/, '');
    const records = readFileSync(path.join(dataset, formulation, file), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { sample_id: string; input: string; output: GoldCall[] })
      .filter((r) => keep(r.sample_id) && (formulation === 'rest' || vakraExpressible(r.output)))
      .map((r) => ({
        uuid: r.sample_id,
        domain: db,
        status: 'success',
        error: '',
        duration_s: 1.5,
        output: [{ turn_id: 1, query: r.input, answer: '', sequence: { tool_call: asVakraCalls(r.output, db) } }],
      }));
    written += records.length;
    writeFileSync(path.join(dir, `${db}.json`), JSON.stringify(records, null, 2));
    writeFileSync(path.join(dir, `${db}_tools.json`), JSON.stringify([{ uuid: 'tools', domain: db, all_tools: [] }]));
  }
  return written;
}
