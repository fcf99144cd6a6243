import type { EndpointSpec } from '../../runtime/rest/spec.js';

/**
 * Whether a model choosing among a database's endpoints can tell them apart (issue 14's REST
 * task): names that differ from another only by a numeric suffix (`getCountIdByColour_2`),
 * descriptions or summaries that several endpoints share, and endpoints whose parameters
 * share a description (`colour`, `colour_2`: which is which?). The target is none of each.
 */

export interface Distinctness {
  endpoints: number;
  /** Endpoints named like another plus `_<n>`. */
  suffixedNames: number;
  /** Endpoints whose description another endpoint of the database has too. */
  sharedDescriptions: number;
  /** Endpoints whose summary another endpoint of the database has too. */
  sharedSummaries: number;
  /** Endpoints with two parameters described alike. */
  ambiguousParameters: number;
}

/** The endpoints of one database. */
export function distinctness(endpoints: readonly EndpointSpec[]): Distinctness {
  const names = new Set(endpoints.map((e) => e.operationId));
  const shared = (text: (e: EndpointSpec) => string) => {
    const counts = new Map<string, number>();
    for (const e of endpoints) counts.set(text(e), (counts.get(text(e)) ?? 0) + 1);
    return endpoints.filter((e) => counts.get(text(e))! > 1).length;
  };
  return {
    endpoints: endpoints.length,
    suffixedNames: endpoints.filter((e) => {
      const base = /^(.+)_\d+$/.exec(e.operationId)?.[1];
      return base !== undefined && names.has(base);
    }).length,
    sharedDescriptions: shared((e) => e.description),
    sharedSummaries: shared((e) => e.summary),
    ambiguousParameters: endpoints.filter(
      (e) => new Set(e.parameters.map((p) => p.description)).size < e.parameters.length,
    ).length,
  };
}

/**
 * The gate on a database's endpoints once de-duplicated and told apart (rest.dedup): each
 * endpoint a model could not tell from one before it, with why — named like it plus `_<n>`,
 * the same summary and description, or the same summary and parameters over other SQL.
 * Their instances are refused (`format:indistinct`): the dataset never serves two endpoints
 * a caller must guess between, whichever synthesizer proposed them.
 */
export function indistinctEndpoints(endpoints: readonly EndpointSpec[]): Map<string, string> {
  const found = new Map<string, string>();
  const names = new Set(endpoints.map((e) => e.operationId));
  const firstWith = new Map<string, EndpointSpec>();
  for (const e of endpoints) {
    const base = /^(.+)_\d+$/.exec(e.operationId)?.[1];
    if (base !== undefined && names.has(base)) {
      found.set(e.operationId, `${e.operationId} is named like ${base} plus a number`);
      continue;
    }
    const parameters = e.parameters.map((p) => p.description);
    for (const [key, what] of [
      [JSON.stringify(['text', e.summary, e.description]), 'summary and description'],
      [JSON.stringify(['parameters', e.summary, parameters]), 'summary and parameters'],
    ] as const) {
      const earlier = firstWith.get(key);
      if (earlier && earlier.sql !== e.sql && !found.has(e.operationId))
        found.set(e.operationId, `${e.operationId} has the ${what} of ${earlier.operationId}, over other SQL`);
      if (!earlier) firstWith.set(key, e);
    }
  }
  return found;
}

/** Figures of several databases, added up. */
export function sumDistinctness(parts: readonly Distinctness[]): Distinctness {
  const total: Distinctness = {
    endpoints: 0,
    suffixedNames: 0,
    sharedDescriptions: 0,
    sharedSummaries: 0,
    ambiguousParameters: 0,
  };
  for (const part of parts) for (const key of Object.keys(total) as (keyof Distinctness)[]) total[key] += part[key];
  return total;
}
