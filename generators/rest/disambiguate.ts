import type { DatabaseInfo } from '../../core/model.js';
import type { EndpointSpec, ParameterSpec } from '../../runtime/rest/spec.js';
import { placeholderName, tokenize } from '../../runtime/sql/lexer.js';
import { scopedColumnResolver } from './columns.js';
import { parseEndpointSql } from './endpoint-query.js';
import { endpointFeatures, type Feature } from './features.js';
import { clip, operationSlug, pascal, truncateIdentifier } from './naming.js';
import { joinRole } from './roles.js';
import { findValueSites } from './value-sites.js';

/**
 * Telling a database's endpoints apart (issue 14), after dedup and whatever synthesized them:
 * endpoints that share a name (up to case and path), a summary or a description get the
 * features of their queries that separate them from one another (features.ts: a fixed
 * condition, the order and limit, a filtered column and its table, grouping, DISTINCT, the
 * select items, the tables) added to the name, summary and description that collide; and
 * parameters of one endpoint described alike get their column, the role its table plays and
 * their position. Pure and deterministic: the output depends on the endpoints and their order
 * only. What features cannot separate (two endpoints whose queries read alike) is left as it
 * is: the names get dedup's numeric suffixes, and distinctness.ts counts them.
 */

type Field = 'name' | 'summary' | 'description';
const FIELDS: readonly Field[] = ['name', 'summary', 'description'];

const fieldKey: Record<Field, (spec: EndpointSpec) => string> = {
  // As dedup compares names (case-insensitively) and paths (slugs): letters and digits only.
  name: (spec) => spec.operationId.toLowerCase().replace(/[^a-z0-9]/g, ''),
  summary: (spec) => spec.summary,
  description: (spec) => spec.description,
};

export function disambiguate(specs: readonly EndpointSpec[], db: DatabaseInfo): EndpointSpec[] {
  const described = specs.map((spec) => withDistinctParameters(spec, db));
  const features = described.map((spec) => endpointFeatures(spec, db));
  const result = [...described];
  for (const group of collisionGroups(described)) {
    const sets = (identity: (f: Feature) => string) => group.map((i) => new Set(features[i].map(identity)));
    const byPhrase = sets(phraseOf);
    const byName = sets(nameOf);
    group.forEach((i, k) => {
      const others = (all: Set<string>[]) => all.filter((_, j) => j !== k);
      const colliding = FIELDS.filter((field) =>
        group.some((j) => j !== i && fieldKey[field](described[j]) === fieldKey[field](described[i])),
      );
      result[i] = labelled(described[i], colliding, {
        name: separating(features[i], others(byName), nameOf),
        text: separating(features[i], others(byPhrase), phraseOf),
      });
    });
  }
  return result;
}

/** Endpoints linked by a shared name, summary or description (transitively), groups of two or more, in input order. */
function collisionGroups(specs: readonly EndpointSpec[]): number[][] {
  const parent = specs.map((_, i) => i);
  const root = (i: number): number => (parent[i] === i ? i : (parent[i] = root(parent[i])));
  for (const field of FIELDS) {
    const first = new Map<string, number>();
    specs.forEach((spec, i) => {
      const key = fieldKey[field](spec);
      const j = first.get(key);
      if (j === undefined) first.set(key, i);
      else parent[root(i)] = root(j);
    });
  }
  const groups = new Map<number, number[]>();
  specs.forEach((_, i) => groups.set(root(i), [...(groups.get(root(i)) ?? []), i]));
  return [...groups.values()].filter((g) => g.length > 1);
}

/**
 * Few of an endpoint's features that no other endpoint of its group has all of: greedily the
 * one that sets it apart from the most others not yet set apart (ties: rank order), kept in
 * rank order. An endpoint whose features are all another's gets those it does not share
 * with every other. Two endpoints with different feature sets so never get the same choice.
 */
function separating(features: Feature[], others: Set<string>[], identity: (f: Feature) => string): Feature[] {
  const seen = new Set<string>();
  const candidates = features.filter(
    (f) => others.some((o) => !o.has(identity(f))) && !seen.has(identity(f)) && seen.add(identity(f)),
  );
  const chosen = new Set<Feature>();
  let remaining = others;
  while (remaining.length) {
    const apart = (f: Feature) => remaining.filter((o) => !o.has(identity(f))).length;
    const best = candidates.reduce<Feature | null>(
      (b, f) => (!chosen.has(f) && apart(f) > (b ? apart(b) : 0) ? f : b),
      null,
    );
    if (!best) return candidates;
    chosen.add(best);
    remaining = remaining.filter((o) => o.has(identity(best)));
  }
  return candidates.filter((f) => chosen.has(f));
}

/** A feature as a summary or description tells it; as a name does (two features may share their words). */
const phraseOf = (f: Feature) => f.phrase;
const nameOf = (f: Feature) => f.name.join(' ');

const NAME_TAIL = 48;
const SUMMARY_TAIL = 120;

/** The endpoint with the chosen features added to the fields that collide. */
function labelled(spec: EndpointSpec, fields: Field[], chosen: { name: Feature[]; text: Feature[] }): EndpointSpec {
  const phrases = chosen.text.map((f) => f.phrase);
  let { operationId, path, summary, description } = spec;
  if (fields.includes('name') && chosen.name.length) {
    const tail = truncateIdentifier(pascal(chosen.name.flatMap((f) => f.name)), NAME_TAIL);
    operationId = truncateIdentifier(spec.operationId, 64 - tail.length) + tail;
    path = spec.path.slice(0, spec.path.lastIndexOf('/') + 1) + operationSlug(operationId);
  }
  if (fields.includes('summary') && phrases.length) {
    const tail = clip(`, ${phrases.join(', ')}`, SUMMARY_TAIL);
    summary = clip(spec.summary, 200 - tail.length) + tail;
  }
  if (fields.includes('description') && phrases.length) {
    const tail = ` Specifically: ${phrases.join('; ')}.`;
    description = clip(spec.description, 2000 - Math.min(tail.length, 1000)) + clip(tail, 1000);
  }
  return { ...spec, operationId, path, summary, description };
}

/**
 * Parameters described alike (an LLM's `colour`, `colour_2`) get the column they are
 * compared with and the role its table plays (roles.ts), then, if still alike, their
 * position among them.
 */
function withDistinctParameters(spec: EndpointSpec, db: DatabaseInfo): EndpointSpec {
  if (!alike(spec.parameters).some(Boolean)) return spec;
  const parsed = parseEndpointSql(spec.sql, db);
  const tokens = tokenize(spec.sql);
  const columns = new Map<string, string>();
  if (parsed.ok) {
    const resolve = scopedColumnResolver(tokens, parsed.value.query, db);
    for (const site of findValueSites(tokens)) {
      const name = placeholderName(tokens[site.first]);
      const ref = site.columns.find((r) => resolve(r, site.first));
      const column = ref && resolve(ref, site.first);
      if (name === null || !ref || !column || columns.has(name)) continue;
      const role = ref.qualifier ? joinRole(ref.qualifier, parsed.value.query, db) : null;
      const roleText = role
        ? `, the ${role.words.join(' ')} of ${role.table} (joined on ${role.table}.${role.column})`
        : '';
      columns.set(name, `column ${column.table.name}.${column.column.name}${roleText}`);
    }
  }
  const alikeBefore = alike(spec.parameters);
  const withColumns = spec.parameters.map((p, i) =>
    alikeBefore[i] && columns.has(p.name) ? suffixed(p, columns.get(p.name)!) : p,
  );
  const stillAlike = alike(withColumns);
  const parameters = withColumns.map((p, i) => {
    if (!stillAlike[i]) return p;
    const same = withColumns.filter((q) => q.description === p.description);
    return suffixed(p, `value ${same.indexOf(p) + 1} of ${same.length}`);
  });
  return { ...spec, parameters };
}

/** Per parameter: whether another parameter has its description. */
function alike(parameters: readonly ParameterSpec[]): boolean[] {
  return parameters.map((p) => parameters.filter((q) => q.description === p.description).length > 1);
}

function suffixed(parameter: ParameterSpec, text: string): ParameterSpec {
  const tail = `; ${text}`;
  return { ...parameter, description: clip(parameter.description, 500 - tail.length) + tail };
}
