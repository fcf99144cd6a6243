import type { DatabaseInfo, Instance } from '../../core/model.js';
import { dbCacheKey } from '../stages/db-key.js';
import { goldStage } from '../stages/gold.js';
import { cacheKeyOf } from '../store/run-store.js';
import type { RestPhaseContext } from './rest-phases.js';

/**
 * The cache key of an instance's rest.synthesize record, computed before anything runs
 * (output reuse needs it for every instance). Its own light module: a run whose outputs
 * are reused loads nothing of REST's synthesis, checks or server.
 */

const SYNTH_VERSION = 1;

export function restSynthesisKey(
  instance: Instance,
  db: DatabaseInfo,
  options: Pick<RestPhaseContext, 'config' | 'datasetName' | 'services' | 'stageRunner' | 'executor' | 'code'>,
): string {
  const { config, services } = options;
  const goldKey = options.stageRunner.keyOf(goldStage, { instance }, { config, db, executor: options.executor });
  return cacheKeyOf(
    'rest.synthesize',
    SYNTH_VERSION,
    {
      question: instance.question,
      evidence: instance.evidence,
      sql: instance.sql,
      gold: goldKey,
      db: dbCacheKey(db),
      dataset: options.datasetName,
      synthesizer: services.synthesizer.fingerprint,
      fallback: services.fallback?.fingerprint ?? null,
      judge: services.judge?.fingerprint ?? null,
      attempts: config.rest.attempts,
      maxStringLength: config.rest.maxStringLength,
      timeoutMs: config.executeTimeoutMs,
    },
    undefined,
    options.code,
  );
}
