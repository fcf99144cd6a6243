import { stringify } from 'yaml';
import { groupBy } from '../../core/group.js';
import type { ExportSample } from '../sample.js';
import type { ExportWriter } from '../writer.js';
import type { VakraExample } from './records.js';

/**
 * Writes VAKRA examples as its repository lays them out (its runner reads
 * `data/<split>/<capability>/input/<domain>.json`, its evaluator the `output/` beside it), one
 * folder per split so that `vakra/test` drops in as VAKRA's `data/test`:
 *
 *   vakra/<split>/<capability>/input/<db>.json      the runner's input records
 *   vakra/<split>/<capability>/output/<db>.json     the ground truth
 *   vakra/<split>/mcp_tool_universe_id_mapping.yaml one capability-1 universe per uuid
 *   vakra/<split>/departures.json                   samples whose calls use a construct where VAKRA's runtime departs from SQLite
 *
 * SLOT and SEL samples of a database share its capability-1 files (VAKRA's router serves each
 * by its universe's server_type).
 */
export async function writeVakraFiles(
  writer: ExportWriter,
  lines: readonly { sample: ExportSample; example: VakraExample }[],
): Promise<void> {
  for (const [split, inSplit] of groupBy(lines, (l) => l.sample.split)) {
    for (const [capability, inCapability] of groupBy(inSplit, (l) => l.example.capability))
      for (const [db, entries] of groupBy(inCapability, (l) => l.sample.item.db)) {
        const folder = `vakra/${split}/${capability}`;
        await writer.write(`${folder}/input/${db}.json`, pythonJson(entries.map((e) => e.example.input)));
        await writer.write(`${folder}/output/${db}.json`, pythonJson(entries.map((e) => e.example.output)));
      }
    const universes = Object.fromEntries(
      inSplit.flatMap(({ example }) => (example.universe ? [[example.input.uuid, example.universe]] : [])),
    );
    if (Object.keys(universes).length > 0)
      await writer.write(`vakra/${split}/mcp_tool_universe_id_mapping.yaml`, stringify(universes, { lineWidth: 0 }));
    const departures = inSplit
      .filter(({ example }) => example.departures.length > 0)
      .map(({ sample, example }) => ({ uuid: example.input.uuid, key: sample.key, departures: example.departures }));
    await writer.write(`vakra/${split}/departures.json`, pythonJson(departures));
  }
}

/** JSON as VAKRA's files are written (`json.dump(..., indent=2)`), one file at a time. */
function pythonJson(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}
