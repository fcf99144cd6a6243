import type { SqlValue } from '../../core/model.js';
import type { TransformKind } from '../../generators/chain/transforms.js';
import type { ArgumentValue, ServedEndpointSpec } from '../../runtime/rest/spec.js';
import type { VerifiedChain } from './verify.js';

/** A chain sample and what it is made of: what chains.ts and nested-chains.ts make, emit-chain.ts writes. */

/** A verified REST sample: the first hop of its chains. */
export interface FirstHop {
  /** The REST sample's id (its question's). */
  id: string;
  question: string;
  evidence: string;
  endpoint: ServedEndpointSpec;
  args: Readonly<Record<string, ArgumentValue>>;
}

export interface ChainHop {
  endpoint: ServedEndpointSpec;
  args: Record<string, ArgumentValue>;
  /** Hops after the first: the parameter filled from the hop before, its field, and how. */
  link?: { param: string; field: string; fieldIndex: number; transform: TransformKind };
}

export interface ChainSample {
  /** `<first hop's id>.<hops>.<n>`: the n-th chain of that length from that first hop. */
  id: string;
  firstId: string;
  question: string;
  evidence: string;
  components: string[];
  /**
   * Who wrote the question (`template`, `llm:<provider>/<model>`; `source`: the source's own
   * question), and why the template did when an LLM was asked.
   */
  writer: { name: string; fallback?: string };
  /** `endpoints`: verified REST endpoints linked; `nested_sql`: a gold statement's own subquery (nested-chains.ts). */
  origin: 'endpoints' | 'nested_sql';
  hops: ChainHop[];
  /** Each hop's response body, as the server answers it. */
  responses: unknown[];
  /** The value each link carried (hop 2 onwards). */
  bridges: SqlValue[];
  verified: VerifiedChain;
}
