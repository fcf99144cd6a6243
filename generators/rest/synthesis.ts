import type { DatabaseInfo, Instance } from '../../core/model.js';
import type { Outcome } from '../../core/outcome.js';
import type { ArgumentValue, EndpointSpec, SynthesizedEndpoint } from '../../runtime/rest/spec.js';

/**
 * The synthesizer contract of rest.synthesize: instances of one database in, one endpoint
 * (or a categorized failure) per instance out, in request order. Two implementations: the
 * deterministic template synthesizer (below) and the LLM code-generation agent (agent.ts).
 * The pipeline's verify-and-retry loop calls `synthesize` again for the instances whose
 * endpoint failed a check, with every earlier failed attempt as feedback.
 */

/** One earlier attempt for an instance and why it was rejected (the loop's feedback). */
export interface FailedAttempt {
  /** `format:<why>`, `execution:<why>`, `semantic:<why>` or an `llm:<why>` category. */
  category: string;
  message: string;
  /** What was proposed, when something was. */
  endpoint?: { spec: EndpointSpec; arguments: Record<string, ArgumentValue> };
}

export interface SynthesisRequest {
  instance: Instance;
  /** Earlier failed attempts, oldest first (empty on the first attempt). */
  previous: FailedAttempt[];
}

export interface Synthesizer {
  /** `template` or `llm:<provider>/<model>`: recorded with each sample. */
  readonly name: string;
  /**
   * Everything besides the request that changes what it proposes (prompt texts, model,
   * params): part of the cache key of rest.synthesize.
   */
  readonly fingerprint: unknown;
  /** Its answer never depends on the feedback (the template): one attempt is all it gets. */
  readonly ignoresFeedback?: boolean;
  /** One outcome per request, same order; a rejection's category says why (`llm:timeout`, ...). */
  synthesize(
    requests: readonly SynthesisRequest[],
    db: DatabaseInfo,
    datasetName: string,
  ): Promise<Outcome<SynthesizedEndpoint>[]>;
}

/**
 * The deterministic synthesizer: feedback cannot change its answer, so it ignores it. Its
 * module (and the SQL parser) loads on first use: a run served from the cache needs only
 * the fingerprint.
 */
export const templateSynthesizer: Synthesizer = {
  name: 'template',
  fingerprint: 'template',
  ignoresFeedback: true,
  async synthesize(requests, db, datasetName) {
    const { synthesizeFromTemplate } = await import('./template.js');
    return requests.map(({ instance }) => synthesizeFromTemplate(instance, db, datasetName));
  },
};
