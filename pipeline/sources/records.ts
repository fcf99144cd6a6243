import type { Instance } from '../../core/model.js';
import type { NaturalNames } from './schema.js';

/**
 * One question record as read from a source, before its database is known to exist:
 * either the fields of an instance or the reason it is bad input.
 */
export type SourceRecord =
  { ok: true; instance: Instance } | { ok: false; index: number; id: string; db: string; message: string };

export interface FieldNames {
  /** Keys that may hold the id, in order of preference. */
  id: readonly string[];
  /** When no id key is present, use the record's position (BIRD train.json has no question_id). */
  idFromIndex: boolean;
}

/**
 * Validates one parsed record. `where` names its position for messages (`line 12`,
 * `record 7`); it is also the rejection id when the record has no usable id.
 */
export function toRecord(value: unknown, index: number, where: string, fields: FieldNames): SourceRecord {
  const bad = (id: string, db: string, message: string): SourceRecord => ({
    ok: false,
    index,
    id,
    db,
    message: `${where}: ${message}`,
  });
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return bad(where, '', 'not a JSON object');
  }
  const record = value as Record<string, unknown>;
  const dbId = record.db_id;
  const dbLabel = typeof dbId === 'string' ? dbId : '';
  const idKey = fields.id.find((key) => key in record);
  const rawId = idKey === undefined ? (fields.idFromIndex ? index : undefined) : record[idKey];
  if (!(typeof rawId === 'string' && rawId.trim() !== '') && !(typeof rawId === 'number' && Number.isInteger(rawId))) {
    return bad(where, dbLabel, `missing or invalid ${fields.id.join('/')} (a non-empty string or an integer)`);
  }
  const id = String(rawId);
  if (typeof dbId !== 'string' || dbId.trim() === '') return bad(id, '', 'missing or empty db_id');
  if (!/^[\w.-]+$/.test(dbId) || dbId.startsWith('.')) return bad(id, dbId, `invalid db_id ${JSON.stringify(dbId)}`);
  const question = record.question;
  if (typeof question !== 'string' || question.trim() === '') return bad(id, dbId, 'missing or empty question');
  const sql = 'SQL' in record ? record.SQL : record.sql;
  if (typeof sql !== 'string') return bad(id, dbId, `SQL must be a string, got ${describe(sql)}`);
  if (sql.trim() === '') return bad(id, dbId, 'empty SQL');
  const evidence = record.evidence ?? '';
  if (typeof evidence !== 'string') return bad(id, dbId, `evidence must be a string, got ${describe(evidence)}`);
  const difficulty = record.difficulty ?? null;
  if (difficulty !== null && typeof difficulty !== 'string') {
    return bad(id, dbId, `difficulty must be a string, got ${describe(difficulty)}`);
  }
  return { ok: true, instance: { id, index, dbId, question, evidence, sql, difficulty } };
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}

/** What a layout reader produces; `loadSource` resolves databases and assembles the rest. */
export interface RawSource {
  datasetName: string;
  /** The question file read (absolute). */
  questionFile: string;
  records: SourceRecord[];
  /** Folders that may hold `<db>/<db>.sqlite` or `<db>.sqlite`, in order of preference. */
  databaseDirs: string[];
  /** Per db id: natural-language column names, when the layout provides them. */
  naturalNames: Map<string, NaturalNames>;
  warnings: string[];
}

/** A `--source` as the layouts see it: a question file named as such, or a folder and its file names. */
export type SourceCandidate = { file: string } | { folder: string; files: readonly string[] };

/**
 * One source layout, an entry of SOURCES (layouts.ts): `loadSource` reads a source with the
 * first layout whose `detect` accepts it.
 */
export interface SourceLayout<Name extends string = string> {
  /** The manifest's `layout`. */
  readonly name: Name;
  /** What a source of this layout looks like, for the error when no layout accepts one: as a file named, and in a folder. */
  readonly describe: { readonly file: string; readonly folder: string };
  /**
   * The question file to read (absolute), with a note when a folder offered a choice; undefined
   * when `source` is not of this layout. Throws when it is, but cannot be read unambiguously.
   */
  detect(source: SourceCandidate): { file: string; note?: string } | undefined;
  read(questionFile: string): Promise<RawSource>;
}
