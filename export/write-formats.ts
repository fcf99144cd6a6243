import type { LiveApiBenchLayout } from '../config/schema.js';
import { groupBy } from '../core/group.js';
import { orderedFormulations, type Formulation } from '../core/model.js';
import { jsonText } from '../pipeline/files.js';
import { LINE_FORMATS, type LineFormat } from './formats.js';
import {
  liveApiBenchDepartures,
  liveApiBenchPieces,
  liveApiBenchRestTools,
  liveApiBenchUnsupported,
  type SequenceExample,
} from './live-api-bench.js';
import { layoutFile, layoutPath, layoutRecord } from './live-api-bench-layouts.js';
import type { ExportSample } from './sample.js';
import type { FormatName } from './settings.js';
import { SPLIT_NAMES, type SplitName } from './splits.js';
import { TokenCounter, tokenStats, type ExampleTokens, type TokenEncoding, type TokenStats } from './tokens.js';
import type { VakraExample } from './vakra/records.js';
import { writeVakraFiles } from './vakra/write.js';
import type { ExportWriter, Line } from './writer.js';

/**
 * Writes the line formats of an export: per format, formulation and split, each example made,
 * checked against the format's schema, counted for tokens and written as its file streams
 * (Live API-Bench: one JSON array per database).
 */

/** What writing some formats found: their token statistics, the lines refused and the samples a format has no form for. */
export interface FormatsWritten {
  tokens: Record<string, Partial<Record<Formulation, FormulationTokens>>>;
  invalid: { format: string; key: string; message: string }[];
  unsupported: { format: string; key: string; message: string }[];
  /** With a token budget: per format and formulation, the examples written over it. */
  over: OverBudget;
}

/** A formulation's token statistics over its splits, and per split. */
export type FormulationTokens = TokenStats & { splits: Partial<Record<SplitName, TokenStats>> };

export type OverBudget = Record<string, Partial<Record<Formulation, number>>>;

/** How the formats are written: which, the tokenizer of their statistics, the token budget reported, Live API-Bench's layout. */
export interface FormatOptions {
  formats: readonly FormatName[];
  encoding: TokenEncoding;
  maxTokens?: number;
  /** Default `records`. */
  liveApiBenchLayout?: LiveApiBenchLayout;
}

/** Formulation, then split, then source order: the order every format's files and the provenance share. */
export function groupsOf(
  samples: readonly ExportSample[],
): { formulation: Formulation; split: SplitName; samples: ExportSample[] }[] {
  const groups = groupBy(samples, (s) => `${s.item.formulation}/${s.split}`);
  const formulations = orderedFormulations([...new Set(samples.map((s) => s.item.formulation))]);
  return formulations.flatMap((formulation) =>
    SPLIT_NAMES.flatMap((split) => {
      const group = groups.get(`${formulation}/${split}`);
      return group ? [{ formulation, split, samples: group }] : [];
    }),
  );
}

/** The formats named (in LINE_FORMATS order), written for these samples. */
export async function writeFormats(
  writer: ExportWriter,
  samples: readonly ExportSample[],
  { formats, encoding, maxTokens, liveApiBenchLayout = 'records' }: FormatOptions,
): Promise<FormatsWritten> {
  const written: FormatsWritten = { tokens: {}, invalid: [], unsupported: [], over: {} };
  const groups = groupsOf(samples);
  const counter = new TokenCounter(encoding);
  for (const format of namedFormats(formats)) {
    if (format.name === 'vakra') {
      // One file per database holds its SLOT and SEL samples: every group's lines first.
      const lines = groups.flatMap((group) => [...checkedExamples(format, group.samples, written, counter, undefined)]);
      await writeVakraFiles(writer, lines as { sample: ExportSample; example: VakraExample }[]);
      continue;
    }
    const perFormulation: Partial<Record<Formulation, FormulationTokens>> = {};
    for (const formulation of orderedFormulations([...new Set(groups.map((g) => g.formulation))])) {
      const splits: Partial<Record<SplitName, ExampleTokens[]>> = {};
      for (const group of groups.filter((g) => g.formulation === formulation)) {
        const counts = (splits[group.split] = [] as ExampleTokens[]);
        const count = format.parts ? (tokens: ExampleTokens) => counts.push(tokens) : undefined;
        const lines = checkedExamples(format, group.samples, written, counter, count);
        await writeFormatFiles(writer, format, group, lines, liveApiBenchLayout);
      }
      if (!format.parts) continue;
      const all = Object.values(splits).flat();
      perFormulation[formulation] = {
        ...tokenStats(encoding, all),
        splits: Object.fromEntries(Object.entries(splits).map(([split, c]) => [split, tokenStats(encoding, c)])),
      };
      const over = maxTokens === undefined ? 0 : all.filter((t) => t.total > maxTokens).length;
      if (over > 0) (written.over[format.name] ??= {})[formulation] = over;
    }
    if (format.parts) written.tokens[format.name] = perFormulation;
    if (format.name === 'live-api-bench')
      await writer.write('live-api-bench/departures.json', jsonText(departures(samples)));
  }
  return written;
}

/** The exported SLOT/SEL samples whose calls or answer meet a construct where the published runtime departs from SQLite. */
function departures(samples: readonly ExportSample[]) {
  return samples.flatMap((sample) => {
    const found = liveApiBenchUnsupported(sample) === undefined ? liveApiBenchDepartures(sample) : [];
    return found.length > 0 ? [{ key: sample.key, split: sample.split, departures: found }] : [];
  });
}

/** The formats named, in LINE_FORMATS order. */
const namedFormats = (formats: readonly FormatName[]) =>
  LINE_FORMATS.filter((f) => formats.includes(f.name as FormatName));

/** Each sample's tokens in each training format named (those with `parts`), the line as it would be written. */
export function tokensPerSample(
  samples: readonly ExportSample[],
  { formats, encoding }: FormatOptions,
): Map<ExportSample, Record<string, number>> {
  const counter = new TokenCounter(encoding);
  const tokens = new Map(samples.map((s): [ExportSample, Record<string, number>] => [s, {}]));
  for (const format of namedFormats(formats))
    if (format.parts)
      for (const sample of samples)
        tokens.get(sample)![format.name] = counter.count(format.parts(format.example(sample, 0), sample)).total;
  return tokens;
}

/**
 * Each sample's example, made as its file is written (an example is garbage once written);
 * those the format has no form for, or its schema refuses, left out (and listed). `count`
 * is given the tokens of each example written.
 */
function* checkedExamples(
  format: LineFormat,
  samples: readonly ExportSample[],
  left: Pick<FormatsWritten, 'invalid' | 'unsupported'>,
  counter: TokenCounter,
  count: ((tokens: ExampleTokens) => void) | undefined,
): Iterable<ExportLine> {
  let index = 0;
  for (const sample of samples) {
    const why = format.unsupported?.(sample);
    if (why) {
      left.unsupported.push({ format: format.name, key: sample.key, message: why });
      continue;
    }
    // The index is the line's own position in its file (xLAM numbers its lines).
    const example = format.example(sample, index);
    const checked = format.schema.safeParse(example);
    if (!checked.success) {
      left.invalid.push({ format: format.name, key: sample.key, message: checked.error.message });
      continue;
    }
    index++;
    count?.(counter.count(format.parts!(example, sample)));
    yield { sample, example };
  }
}

interface ExportLine {
  sample: ExportSample;
  example: unknown;
}

async function writeFormatFiles(
  writer: ExportWriter,
  format: LineFormat,
  group: { formulation: Formulation; split: SplitName },
  lines: Iterable<ExportLine>,
  layout: LiveApiBenchLayout,
): Promise<void> {
  const dir = `${format.name}/${group.formulation}`;
  if (format.name !== 'live-api-bench') {
    const text = (line: ExportLine): Line =>
      format.text ? format.text(line.example, line.sample) : JSON.stringify(line.example);
    await writer.writeLines(`${dir}/${group.split}.jsonl`, mapLazily(lines, text));
    return;
  }
  // As published: one file per database; REST's endpoints, per database, beside them.
  for (const [db, entries] of groupBy([...lines], (l) => l.sample.item.db)) {
    if (group.formulation !== 'rest') {
      // SLOT/SEL in the layout asked for (export/live-api-bench-layouts.ts), each record made from the checked one.
      const records = entries.map((l) => layoutRecord(layout, l.example as SequenceExample, l.sample));
      const file = `${format.name}/${layoutPath(layout, group.formulation, group.split, db)}`;
      await writer.writePieces(file, liveApiBenchPieces(layoutFile(layout, records)));
      continue;
    }
    await writer.writePieces(`${dir}/${group.split}/${db}.json`, liveApiBenchPieces(entries.map((l) => l.example)));
    await writer.write(
      `${dir}/tools/${db}.json`,
      jsonText(liveApiBenchRestTools(entries.find((l) => !l.sample.negative)?.sample.item.tools ?? [])),
    );
  }
}

/** Each line's text made as it is written (the texts of a file are never all held at once). */
function* mapLazily<T>(items: Iterable<T>, text: (item: T) => Line): Iterable<Line> {
  for (const item of items) yield text(item);
}
