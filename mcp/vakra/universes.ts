import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { z } from 'zod';
import { UserFacingError } from '../../core/errors.js';
import { callsRest, type ToolCall } from '../../core/model.js';
import { DatasetError, loadEvalDataset, type EvalDataset, type EvalItem } from '../../eval/dataset.js';
import { vakraUuid } from '../../eval/predictions/vakra-uuid.js';
import {
  publishedInitialization,
  sortedAliases,
  type PublishedInitArguments,
} from '../../eval/predictions/published-names.js';

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
  /** VAKRA's init arguments of the starting table: the order of its keys (its tables as listed). */
  published: PublishedInitArguments;
}

/** Init arguments in the order VAKRA's mapping holds them (aliases sorted, as the export writes them), where that order can join them. */
const vakraOrder = (args: PublishedInitArguments) => sortedAliases(args) ?? args;

/** The universes of a dataset's SLOT and SEL samples (REST and chain samples are VAKRA's capabilities 2 and 3: none). */
export function datasetUniverses(items: readonly EvalItem[]): Universe[] {
  return items.flatMap((item) =>
    callsRest(item.formulation)
      ? []
      : [
          {
            id: vakraUuid(item),
            serverType: item.formulation === 'sel' ? ('selection' as const) : ('slot_filling' as const),
            initialization: item.initialization,
            published: vakraOrder(publishedInitialization(item.initialization[0], item.db).arguments),
          },
        ],
  );
}

/**
 * The universes of `db`: its SLOT then SEL samples in a generated dataset, and those of a
 * mapping file (in its place where a uuid is in both); and the datasets read (their databases
 * are the ones the tools run on).
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
  // A mapping's universe is what VAKRA's own server would load under its uuid: it replaces the dataset's.
  const universes = new Map(datasets.flatMap((d) => datasetUniverses(d.items)).map((u) => [u.id, u]));
  for (const universe of mapping ? await mappingUniverses(mapping, db) : []) universes.set(universe.id, universe);
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
    .map(([id, entry]) => {
      const published = { database_path: '', ...entry.init_args };
      return { id, serverType: entry.server_type, initialization: [nl2apiInitialization(published, db)], published };
    });
}

/**
 * The published init arguments (export/live-api-bench.ts `publishedInitialization`) as nl2api's
 * call, joined as VAKRA's initialize_active_data joins them: from the first alias listed (""
 * is a query's one unaliased table), each condition joining whichever of its two aliases is
 * not joined yet (a condition between two joined aliases is one more equality of the last
 * join). The join's kind is kept: nl2api joins LEFT where the SQL did, VAKRA's runtime does not.
 */
export function nl2apiInitialization(args: PublishedInitArguments, db: string): ToolCall {
  const entries = Object.entries(args.alias_to_table_dict);
  const aliasOf = (qualified: string) => qualified.slice(0, qualified.indexOf('.'));
  const tableOf = (alias: string) => ({
    alias: alias || args.alias_to_table_dict[alias].original_table_name,
    table: args.alias_to_table_dict[alias].original_table_name,
  });
  const tables = entries.length > 0 ? [tableOf(entries[0][0])] : [];
  const joined = new Set(entries.slice(0, 1).map(([alias]) => alias));
  const joins: { type: string; alias: string; on: { left: string; right: string }[] }[] = [];
  for (const [left, right, kind] of args.condition_sequence) {
    const alias = [aliasOf(right), aliasOf(left)].find((a) => !joined.has(a) && a in args.alias_to_table_dict);
    if (alias === undefined) {
      joins[joins.length - 1]?.on.push({ left, right });
      continue;
    }
    joined.add(alias);
    tables.push(tableOf(alias));
    joins.push({ type: kind.toLowerCase(), alias, on: [{ left, right }] });
  }
  return { name: 'initialize_active_data', arguments: { database: db, tables, joins }, label: STARTING_TABLE };
}

const STARTING_TABLE = 'starting_table_var';
