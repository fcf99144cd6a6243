import { sha256 } from '../../core/hash.js';
import type { ResolvedColumn } from './columns.js';
import type { SiteOp, ValueSite } from './value-sites.js';

/**
 * Names and phrases for endpoints and parameters, from column names and the dataset's
 * column descriptions: identifiers split into words (`CDSCode` → cds code,
 * `County Name` → county name), rejoined as snake_case, camelCase or a slug.
 */

export function words(text: string): string[] {
  return (text.match(/[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+/g) ?? []).map((w) => w.toLowerCase());
}

export function snake(parts: string[]): string {
  return parts.join('_');
}

export function pascal(parts: string[]): string {
  return parts.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('');
}

/** A path segment: lower-case `[a-z0-9_-]`, never empty. */
export function slug(text: string): string {
  const s = text
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return s || 'x';
}

/** camelCase words → kebab slug (`getSchoolsByCountyName` → get-schools-by-county-name). */
/** `/v1/<dataset>/<db>/<slug>`: every synthesizer's paths are ours, from the operation id (a model never chooses where its endpoint is served). */
export function endpointPath(datasetName: string, dbId: string, operationId: string): string {
  return `/v1/${slug(datasetName)}/${slug(dbId)}/${operationSlug(operationId)}`;
}

export function operationSlug(operationId: string): string {
  return slug(words(operationId).join('-'));
}

/**
 * Cuts a camelCase identifier to `max` characters: before a connective (`And`, `By`, `With`,
 * `Of`, `For`, `In`), so that what is left names whole phrases (`…ByGenderAndMinBirthDateYear`,
 * not `…AndMaxBirth`, nor a dangling `…And`); else at a word boundary. The words cut off are
 * the parameters' and fields' own descriptions' to tell.
 */
export function truncateIdentifier(id: string, max = 64): string {
  if (id.length <= max) return id;
  const within = (boundaries: number[]) => Math.max(0, ...boundaries.filter((at) => at <= max && at > max / 2));
  const phrase = within([...id.matchAll(/(?<=[a-z0-9])(?:And|By|With|Of|For|In)(?=[A-Z])/g)].map((m) => m.index));
  if (phrase > 0) return id.slice(0, phrase);
  const word = within([...id.matchAll(/(?<=[a-z0-9])(?=[A-Z_])/g)].map((m) => m.index));
  if (word > 0) return id.slice(0, word);
  // One word longer than half the limit: cut it, and a stable hash of the whole keeps it unique.
  return `${id.slice(0, max - 9)}_${sha256(id).slice(0, 8)}`;
}

/** Cuts text to `max` characters with an ellipsis. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1).trimEnd()}…`;
}

/**
 * What tells a compared column apart from the endpoint's own columns: the role a joined
 * table plays (roles.ts finds it: `eye colour` via `superhero.eye_colour_id`), or the table a
 * subquery reads it from (`name` of category, where the endpoint returns products).
 */
export type Role =
  | {
      kind: 'join';
      /** `['eye', 'colour']`. */
      words: string[];
      /** The referencing table and column (`superhero`, `eye_colour_id`). */
      table: string;
      column: string;
    }
  | { kind: 'subquery'; table: string };
export type JoinRole = Extract<Role, { kind: 'join' }>;

const FORMAT_PARTS: Record<string, string> = {
  '%Y': 'year',
  '%m': 'month',
  '%d': 'day',
  '%Y-%m': 'year month',
  '%H': 'hour',
  '%Y-%m-%d': 'date',
};
/** The date part a STRFTIME format extracts (`%Y` → year), if it is a known one. */
export function formatPart(format: string): string | undefined {
  return FORMAT_PARTS[format];
}

const FUNCTION_PARTS: Record<string, string> = {
  COUNT: 'count',
  SUM: 'total',
  TOTAL: 'total',
  AVG: 'average',
  MIN: 'minimum',
  MAX: 'maximum',
  SUBSTR: 'part',
  SUBSTRING: 'part',
  LENGTH: 'length',
  LOWER: 'lowercase',
  UPPER: 'uppercase',
};

/**
 * The words naming what a site compares: the column, and the function part of it; with the
 * role its table plays in the query, when a join gives it one (roles.ts: eye colour).
 */
function comparedWords(
  site: ValueSite,
  column: ResolvedColumn | null,
  role: Role | null,
): { name: string[]; phrase: string } {
  const columnName = column ? column.column.name : (site.columns[0]?.name ?? '');
  const label = columnLabel(columnName, column?.column.description ?? '');
  const own = nameWords(columnName, column?.column.description ?? '');
  const owner = role?.kind === 'subquery' && !mentions(own, label, role.table) ? role.table : null;
  const description =
    role?.kind === 'join'
      ? `the ${role.words.join(' ')} of ${role.table} (${label})`
      : owner
        ? `the ${label} of ${owner}`
        : label;
  const part =
    site.fn === null
      ? null
      : ((site.fnFormat !== null ? FORMAT_PARTS[site.fnFormat] : undefined) ??
        FUNCTION_PARTS[site.fn] ??
        site.fn.toLowerCase());
  const base = role?.kind === 'join' ? overlapped(role.words, own) : owner ? overlapped(words(owner), own) : own;
  if (part === null) return { name: base, phrase: description };
  const partWords = words(part);
  if (site.fn !== null && ['COUNT', 'SUM', 'TOTAL', 'AVG', 'MIN', 'MAX'].includes(site.fn)) {
    return { name: [...partWords, ...base], phrase: `the ${part} of ${description || 'rows'}` };
  }
  return { name: [...base, ...partWords], phrase: `the ${part} of ${description}` };
}

/** Whether a column's words or label already name its table (`category_name`, "name of the category"). */
function mentions(own: string[], label: string, table: string): boolean {
  const tableWords = words(table);
  const said = new Set([...own, ...words(label)]);
  return tableWords.every((w) => said.has(w));
}

/** `eye colour` + `colour` → eye colour; `home team` + `team name` → home team name. */
function overlapped(first: string[], second: string[]): string[] {
  for (let k = Math.min(first.length, second.length); k > 0; k--) {
    if (first.slice(-k).join(' ') === second.slice(0, k).join(' ')) return [...first, ...second.slice(k)];
  }
  return [...first, ...second];
}

const PREFIX: Partial<Record<SiteOp, string>> = {
  '!=': 'excluded',
  'NOT IN': 'excluded',
  'NOT LIKE': 'excluded',
  '>': 'min',
  '>=': 'min',
  BETWEEN_LOW: 'min',
  '<': 'max',
  '<=': 'max',
  BETWEEN_HIGH: 'max',
};

/** A parameter name for a site (before de-duplication), matching PARAMETER_NAME. */
export function parameterBaseName(site: ValueSite, column: ResolvedColumn | null, role: Role | null = null): string {
  const name = comparedWords(site, column, role).name;
  const prefix = PREFIX[site.op];
  const suffix = site.op === 'LIKE' || site.op === 'NOT LIKE' ? ['pattern'] : [];
  const all = [...(prefix ? [prefix] : []), ...(name.length ? name : ['value']), ...suffix];
  const joined = snake(all).slice(0, 56).replace(/_+$/, '');
  return /^[a-z]/.test(joined) ? joined : `p_${joined}`.slice(0, 56);
}

const DESCRIPTION: Record<SiteOp, (what: string) => string> = {
  '=': (w) => `Value of ${w} to match`,
  '!=': (w) => `Value of ${w} to exclude`,
  IN: (w) => `One of the values of ${w} to match`,
  'NOT IN': (w) => `One of the values of ${w} to exclude`,
  '>': (w) => `Lower bound (exclusive) of ${w}`,
  '>=': (w) => `Lower bound (inclusive) of ${w}`,
  BETWEEN_LOW: (w) => `Lower bound (inclusive) of ${w}`,
  '<': (w) => `Upper bound (exclusive) of ${w}`,
  '<=': (w) => `Upper bound (inclusive) of ${w}`,
  BETWEEN_HIGH: (w) => `Upper bound (inclusive) of ${w}`,
  LIKE: (w) => `SQL LIKE pattern (% matches any text, _ one character) for ${w}`,
  'NOT LIKE': (w) => `SQL LIKE pattern (% matches any text, _ one character) of ${w} to exclude`,
};

/** What a parameter filters on, as a phrase (`lower bound (exclusive) of enrollment`). */
export function parameterPhrase(site: ValueSite, column: ResolvedColumn | null, role: Role | null = null): string {
  return DESCRIPTION[site.op](comparedWords(site, column, role).phrase || 'the value');
}

/**
 * The phrase, the column compared (and the join that gives it its role), which of several
 * alike values it is (`position`, 1-based, of `count`) and the column's value description
 * when it is short.
 */
export function parameterDescription(
  site: ValueSite,
  column: ResolvedColumn | null,
  role: Role | null = null,
  position: { index: number; count: number } | null = null,
): string {
  const values = column?.column.valueDescription.trim().replace(/\s+/g, ' ') ?? '';
  const where = column
    ? `column ${column.table.name}.${column.column.name}${role?.kind === 'join' ? `, joined on ${role.table}.${role.column}` : ''}`
    : '';
  const which = position ? `value ${position.index} of ${position.count}` : '';
  const text = [parameterPhrase(site, column, role), where, which].filter(Boolean).join('; ');
  return clip(values && values.length <= 200 ? `${text} (${values})` : text, 500);
}

/**
 * Words naming a column: its own, unless it is cryptic (BIRD's `A2`, `A11`) and its
 * description is a short name (`district_name`).
 */
export function nameWords(columnName: string, description: string): string[] {
  const own = words(columnName);
  const described = words(description);
  const cryptic = columnName.replace(/[^A-Za-z0-9]/g, '').length <= 3 && /[0-9]/.test(columnName);
  return (cryptic && described.length > 0 && described.length <= 4 ? described : own).slice(0, 6);
}

/**
 * A short label for a column: its description when brief, else its name. Read as a noun
 * phrase inside a sentence (`Value of <label> to match`): one line, no trailing period, no
 * preamble (`This field identifies the status` → the status), no capital at a plain word.
 */
export function columnLabel(columnName: string, description: string): string {
  const text = (description.split(/\r?\n/)[0] ?? '')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(
      /^(this|the) (field|column|attribute) (identifies|indicates|shows|represents|contains|is|gives|means)\s+/i,
      '',
    )
    .replace(/\.+$/, '')
    .replace(/^([A-Z])(?=[a-z])/, (c) => c.toLowerCase());
  // A description that is itself an identifier (`district_name`) reads as its words.
  const readable = /^[A-Za-z0-9]+(_[A-Za-z0-9]+)+$/.test(text) ? words(text).join(' ') : text;
  return readable && readable.length <= 60 ? readable : words(columnName).join(' ') || columnName;
}

/** Picks `base`, else `base_2`, `base_3`, ... not in `taken`; records it. */
export function uniqueName(base: string, taken: Set<string>, separator = '_'): string {
  let name = base;
  for (let n = 2; taken.has(name); n++) name = `${base}${separator}${n}`;
  taken.add(name);
  return name;
}
