import type { RecordCalls } from './read.js';

/** IBM VAKRA's runner output, read as nl2api calls (placeholder until the mapping is written). */
export function vakraRecordCalls(record: unknown): RecordCalls {
  void record;
  return { error: 'not yet' };
}
