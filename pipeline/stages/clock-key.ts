import type { Config } from '../../config/schema.js';
import { readsClock } from '../../generators/sql/clock.js';

/** The part of a key that the reference time decides: only for SQL that reads the clock (other items keep their keys when it changes). */
export function clockKey(sql: string, config: Pick<Config, 'referenceTime'>): { clock?: string } {
  return readsClock(sql) ? { clock: config.referenceTime } : {};
}
