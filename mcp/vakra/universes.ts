import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { z } from 'zod';
import { UserFacingError } from '../../core/errors.js';
import type { ToolCall } from '../../core/model.js';
import { DatasetError, loadEvalDataset, type EvalDataset, type EvalItem } from '../../eval/dataset.js';
import type { PublishedInitArguments } from '../../export/live-api-bench.js';

/**
 * VAKRA's tool universes (capability 1): one per sample, named by a uuid, each a starting
 * table and the kind of tools served over it (`slot_filling` or `selection`). VAKRA's
 * `get_data(tool_universe_id)` switches to one. nl2api finds them in a generated dataset (its
 * SLOT and SEL samples, under the uuid its VAKRA export gives them) and, optionally, in a
 * mapping YAML as VAKRA's generate script and nl2api's export write it (`uuid → {domain,
 * server_type, init_args, query}`), whose published init arguments are turned back into
 * nl2api's `initialize_active_data`.
 */

export type ServerType = 'slot_filling' | 'selection';

export interface Universe {
  id: string;
  serverType: ServerType;
  /** nl2api's `initialize_active_data` calls: the first is VAKRA's starting table (a second, of a nested SELECT, is defined for the calls that read it). */
  initialization: ToolCall[];
}

/**
 * The uuid nl2api's VAKRA export gives a sample (export/vakra/records.ts `vakraUuid`, which
 * takes a whole export sample; test/mcp/vakra.test.ts holds the two to the same name).
 */
export function universeId(item: Pick<EvalItem, 'formulation' | 'db' | 'id'>): string {
  return `${item.formulation}-${item.db}-${item.id}`;
}

/** The universes of a dataset's SLOT and SEL samples (REST samples are VAKRA's capability 2: none). */
export function datasetUniverses(items: readonly EvalItem[]): Universe[] {
  return items.flatMap((item) =>
    item.formulation === 'rest'
      ? []
      : [
          {
            id: universeId(item),
            serverType: item.formulation === 'sel' ? ('selection' as const) : ('slot_filling' as const),
            initialization: item.initialization,
          },
        ],
  );
}

/**
 * The universes of `db`: its SLOT then SEL samples in a generated dataset, then those of a
 * mapping file that the dataset does not hold; and the datasets read (their databases are the
 * ones the tools run on).
 */
export async function loadUniverses(
  out: string,
  db: string,
  mapping?: string,
): Promise<{ universes: Map<string, Universe>; datasets: EvalDataset[] }> {
  const datasets: EvalDataset[] = [];
  for (const formulation of ['slot', 'sel'] as const) {
    try {
      datasets.push(await loadEvalDataset(out, { formulation, dbIds: [db] }));
    } catch (error) {
      if (!(error instanceof DatasetError)) throw error;
    }
  }
  if (datasets.length === 0) throw new UserFacingError(`${out} has no SLOT or SEL samples of ${db}`);
  const found = [
    ...datasets.flatMap((d) => datasetUniverses(d.items)),
    ...(mapping ? await mappingUniverses(mapping, db) : []),
  ];
  const universes = new Map<string, Universe>();
  for (const universe of found) if (!universes.has(universe.id)) universes.set(universe.id, universe);
  return { universes, datasets };
}

const MappingSchema = z.record(
  z.string(),
  z.object({
    domain: z.string(),
    server_type: z.enum(['slot_filling', 'selection']).default('slot_filling'),
    init_args: z.object({
      condition_sequence: z.array(z.tuple([z.string(), z.string(), z.string()])),
      alias_to_table_dict: z.record(
        z.string(),
        z.object({ original_table_name: z.string(), modified_table_name: z.string() }),
      ),
      database_path: z.string().optional(),
    }),
  }),
);

/** The universes of `db` in a mapping YAML (VAKRA's router defaults a missing server_type to slot_filling). */
export async function mappingUniverses(file: string, db: string): Promise<Universe[]> {
  let parsed: z.infer<typeof MappingSchema>;
  try {
    parsed = MappingSchema.parse(parse(await readFile(file, 'utf8')));
  } catch (error) {
    throw new UserFacingError(`${file} is not a VAKRA universe mapping: ${(error as Error).message}`);
  }
  return Object.entries(parsed)
    .filter(([, entry]) => entry.domain === db)
    .map(([id, entry]) => ({
      id,
      serverType: entry.server_type,
      initialization: [nl2apiInitialization({ database_path: '', ...entry.init_args }, db)],
    }));
}

/**
 * The published init arguments (export/live-api-bench.ts `publishedInitialization`) back as
 * nl2api's call: alias "" is a query's one unaliased table; each condition joins its
 * right-hand alias, consecutive conditions on one alias are one join's equalities; the join's
 * kind is kept (nl2api joins LEFT where the SQL did, which VAKRA's runtime does not).
 */
export function nl2apiInitialization(args: PublishedInitArguments, db: string): ToolCall {
  const tables = Object.entries(args.alias_to_table_dict).map(([alias, table]) => ({
    alias: alias || table.original_table_name,
    table: table.original_table_name,
  }));
  const joins: { type: string; alias: string; on: { left: string; right: string }[] }[] = [];
  for (const [left, right, kind] of args.condition_sequence) {
    const alias = right.slice(0, right.indexOf('.'));
    const last = joins[joins.length - 1];
    if (last?.alias === alias) last.on.push({ left, right });
    else joins.push({ type: kind.toLowerCase(), alias, on: [{ left, right }] });
  }
  return { name: 'initialize_active_data', arguments: { database: db, tables, joins }, label: STARTING_TABLE };
}

const STARTING_TABLE = 'starting_table_var';
