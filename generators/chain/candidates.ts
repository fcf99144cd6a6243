import type { DatabaseInfo } from '../../core/model.js';
import type { ServedEndpointSpec } from '../../runtime/rest/spec.js';
import type { ChainLink } from './compose.js';
import { endpointSites, type EndpointSites } from './endpoint-sites.js';
import { linkedColumns } from './links.js';
import type { ProvenKey } from './proven-keys.js';
import { transformsFor } from './transforms.js';

/**
 * The chains a database's verified endpoints allow (issue 36): from an endpoint whose field is
 * a column, to an endpoint whose one parameter is compared with that column or one a foreign
 * key joins to it, through each transform that can feed that parameter. A later hop takes
 * nothing but what the hop before gives it, so its endpoint has that one parameter: the
 * question names the first hop's values only.
 */

export interface NextHop {
  endpoint: ServedEndpointSpec;
  link: ChainLink;
}

/** The hops each endpoint can be followed by, per database. */
export class HopGraph {
  private readonly sites = new Map<ServedEndpointSpec, EndpointSites>();
  private readonly next = new Map<ServedEndpointSpec, NextHop[]>();

  constructor(
    private readonly endpoints: readonly ServedEndpointSpec[],
    private readonly db: DatabaseInfo,
    /** Keys the data proves beside the declared ones (proven-keys.ts). */
    private readonly proven: readonly ProvenKey[] = [],
  ) {}

  /** The hops that can follow `from`, in a fixed order. */
  after(from: ServedEndpointSpec): NextHop[] {
    let hops = this.next.get(from);
    if (!hops) this.next.set(from, (hops = this.computeAfter(from)));
    return hops;
  }

  private computeAfter(from: ServedEndpointSpec): NextHop[] {
    const linked = this.linked();
    const { fields } = this.sitesOf(from);
    return this.endpoints.flatMap((to) => {
      if (to === from || to.parameters.length !== 1) return [];
      const [site] = this.sitesOf(to).params;
      if (!site) return [];
      return fields.flatMap((field) =>
        linked(field.column, site.column)
          ? transformsFor(site).map((t) => ({
              endpoint: to,
              link: { param: site.param.name, fieldIndex: field.index, transform: t.kind },
            }))
          : [],
      );
    });
  }

  private sitesOf(endpoint: ServedEndpointSpec): EndpointSites {
    let sites = this.sites.get(endpoint);
    if (!sites)
      this.sites.set(
        endpoint,
        (sites = endpointSites(
          endpoint,
          endpoint.response.fields.map((f) => f.name),
          this.db,
        )),
      );
    return sites;
  }

  private linkedMemo: ReturnType<typeof linkedColumns> | undefined;
  private linked(): ReturnType<typeof linkedColumns> {
    return (this.linkedMemo ??= linkedColumns(this.db, this.proven));
  }
}

/** A chain's later hops: one for a 2-hop chain, two for a 3-hop one. */
export type Continuation = readonly NextHop[];

/**
 * The continuations of a first hop with `hops` hops in all, lazily, in a seeded order (so that
 * the ones tried first spread over endpoints and transforms, the same on every run), never
 * visiting an endpoint twice. A 3-hop chain's second hops are taken in turn, each with its
 * next third hop, so the first few tried do not all share one second hop.
 */
export function* continuations(
  graph: HopGraph,
  first: ServedEndpointSpec,
  hops: 2 | 3,
  seed: string,
): Generator<Continuation> {
  const seconds = ranked(graph.after(first), seed);
  if (hops === 2) {
    for (const second of seconds) yield [second];
    return;
  }
  // Ranked when first reached: a caller trying a few chains hashes the third hops of a few second ones.
  const thirds: NextHop[][] = [];
  const thirdsOf = (i: number) =>
    (thirds[i] ??= ranked(
      graph.after(seconds[i].endpoint).filter((third) => third.endpoint !== first),
      `${seed}\u0000${signature(seconds[i])}`,
    ));
  for (let round = 0; ; round++) {
    let any = false;
    for (let i = 0; i < seconds.length; i++) {
      const third = thirdsOf(i)[round];
      if (third === undefined) continue;
      any = true;
      yield [seconds[i], third];
    }
    if (!any) return;
  }
}

/** The hops in the order of their seeded hashes. */
function ranked(hops: readonly NextHop[], seed: string): NextHop[] {
  const base = fnv1a(seed, FNV_OFFSET);
  return hops
    .map((hop) => ({ hop, rank: fnv1a(signature(hop), base) }))
    .sort((a, b) => a.rank - b.rank)
    .map(({ hop }) => hop);
}

/**
 * FNV-1a, 32 bits, from `hash`: an order that only has to be the same on every run and spread
 * hops about (a cryptographic hash of every pair of hops cost a cold BIRD dev run ~0.9 s).
 */
function fnv1a(text: string, hash: number): number {
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 16777619) >>> 0;
  return hash;
}
const FNV_OFFSET = 2166136261;

const signature = (hop: NextHop) =>
  `${hop.endpoint.operationId}:${hop.link.param}:${hop.link.fieldIndex}:${hop.link.transform}`;
