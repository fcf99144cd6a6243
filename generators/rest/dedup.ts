import type { DatabaseInfo } from '../../core/model.js';
import { canonicalForm, type CanonicalForm } from './canonical.js';
import { disambiguate } from './disambiguate.js';
import { operationSlug, uniqueName } from './naming.js';
import type { ArgumentValue, EndpointSpec, RestCall, SynthesizedEndpoint } from '../../runtime/rest/spec.js';

/**
 * rest.dedup for one database: endpoints whose canonical forms (canonical.ts) are equal are
 * one endpoint — the first in input order is kept, and the instances of the others call it
 * with their arguments renamed position by position. The kept endpoints are then told apart
 * (disambiguate.ts: what separates their queries goes into the names, summaries and
 * descriptions that collide); those that still share an operationId or path get `_2`/`-2`...
 * suffixes in input order, which distinctness.ts counts. Output order is input order.
 */

export interface DedupMerge {
  /** Instance whose endpoint was kept. */
  kept: string;
  /** Instance whose endpoint was merged into it. */
  merged: string;
  reason: string;
}

export interface DedupResult {
  canonical: EndpointSpec[];
  calls: Map<string, RestCall>;
  merges: DedupMerge[];
}

interface Group {
  instanceId: string;
  endpoint: SynthesizedEndpoint;
  form: CanonicalForm;
  spec: EndpointSpec;
}

export function dedupEndpoints(
  endpoints: { instanceId: string; endpoint: SynthesizedEndpoint }[],
  db: DatabaseInfo,
): DedupResult {
  const groups = new Map<string, Group>();
  const membership: { instanceId: string; endpoint: SynthesizedEndpoint; form: CanonicalForm; group: Group }[] = [];
  const merges: DedupMerge[] = [];
  for (const { instanceId, endpoint } of endpoints) {
    const form = canonicalForm(endpoint.spec, db);
    let group = groups.get(form.key);
    if (!group) {
      group = { instanceId, endpoint, form, spec: endpoint.spec };
      groups.set(form.key, group);
    } else {
      merges.push({
        kept: group.instanceId,
        merged: instanceId,
        reason: mergeReason(group.endpoint.spec, endpoint.spec),
      });
    }
    membership.push({ instanceId, endpoint, form, group });
  }

  const kept = [...groups.values()];
  disambiguate(
    kept.map((group) => group.spec),
    db,
  ).forEach((spec, i) => (kept[i].spec = spec));
  const naming = new EndpointNaming();
  const canonical = kept.map((group) => (group.spec = naming.named(group.spec)));

  const calls = new Map<string, RestCall>();
  for (const { instanceId, endpoint, form, group } of membership) {
    const renamed = new Map<string, ArgumentValue>();
    form.parameterOrder.forEach((name, i) => {
      if (Object.hasOwn(endpoint.call.arguments, name))
        renamed.set(group.form.parameterOrder[i], endpoint.call.arguments[name]);
    });
    // Arguments in the kept endpoint's declaration order, as a reader of the sample expects.
    const args: Record<string, ArgumentValue> = {};
    for (const { name } of group.spec.parameters) if (renamed.has(name)) args[name] = renamed.get(name)!;
    calls.set(instanceId, { name: group.spec.operationId, path: group.spec.path, arguments: args });
  }
  return { canonical, calls, merges };
}

/**
 * The endpoints once every merge is made (the deterministic ones and the agent's): a kept
 * endpoint's enums must take the values of every call merged into it, so an enum that misses
 * one (a question asking for a value the column does not hold) is dropped.
 */
export function enumsCoveringCalls(
  canonical: readonly EndpointSpec[],
  calls: ReadonlyMap<string, RestCall>,
): EndpointSpec[] {
  return canonical.map((spec) => withinEnums(spec, [...calls.values()]));
}

function withinEnums(spec: EndpointSpec, calls: readonly RestCall[]): EndpointSpec {
  const own = calls.filter((call) => call.name === spec.operationId);
  const covers = (name: string, values: readonly (string | number)[]) =>
    own.every((call) => {
      const value = call.arguments[name];
      return !Object.hasOwn(call.arguments, name) || (typeof value !== 'boolean' && values.includes(value));
    });
  if (spec.parameters.every((p) => !p.enum || covers(p.name, p.enum))) return spec;
  return {
    ...spec,
    parameters: spec.parameters.map((p) => {
      if (!p.enum || covers(p.name, p.enum)) return p;
      const { enum: _dropped, ...rest } = p;
      return rest;
    }),
  };
}

/**
 * A database's endpoint names, kept apart: each spec in turn keeps its operationId and path
 * unless an earlier one took them, else gets `_2`/`-2`... suffixes (what dedup does to the
 * endpoints it keeps, and what the chains' own endpoints are named by beside them).
 */
export class EndpointNaming {
  private readonly ids = new Set<string>();
  private readonly segments = new Set<string>();

  named<S extends Pick<EndpointSpec, 'operationId' | 'path'>>(spec: S): S {
    const operationId = uniqueCapped(spec.operationId, this.ids);
    const base = spec.path.slice(0, spec.path.lastIndexOf('/') + 1);
    const segment = operationId === spec.operationId ? spec.path.slice(base.length) : operationSlug(operationId);
    return { ...spec, operationId, path: base + uniqueName(segment, this.segments, '-') };
  }
}

/** `id`, else `id_2`, ... kept within 64 characters; compared case-insensitively. */
function uniqueCapped(id: string, taken: Set<string>): string {
  if (!taken.has(id.toLowerCase())) {
    taken.add(id.toLowerCase());
    return id;
  }
  for (let n = 2; ; n++) {
    const suffix = `_${n}`;
    const candidate = id.slice(0, 64 - suffix.length) + suffix;
    if (!taken.has(candidate.toLowerCase())) {
      taken.add(candidate.toLowerCase());
      return candidate;
    }
  }
}

function mergeReason(kept: EndpointSpec, merged: EndpointSpec): string {
  const same =
    kept.sql === merged.sql &&
    JSON.stringify(kept.parameters.map((p) => p.name)) === JSON.stringify(merged.parameters.map((p) => p.name));
  return same
    ? `identical SQL: ${merged.operationId} is ${kept.operationId}`
    : `equivalent SQL up to parameter names, aliases, formatting and operand order: ${merged.operationId} → ${kept.operationId}`;
}
