/**
 * Jest's own order (the files that failed last time first, then the slowest first, by the
 * durations it keeps in its cache), with the durations of test/support/durations.json where
 * jest has none of its own: on a clean clone jest knows no durations and would order the
 * files by size, starting a minute-long end-to-end file last and leaving the other worker
 * idle while it runs. The durations need not be current; they only order the files.
 * `node test/support/timing-table.js <dir> --write-durations` writes them from a run.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Sequencer from '@jest/test-sequencer';

const DURATIONS = new URL('./durations.json', import.meta.url);
const committed = JSON.parse(readFileSync(DURATIONS, 'utf8'));

export default class DurationSequencer extends Sequencer.default {
  time(test) {
    const relative = path.relative(test.context.config.rootDir, test.path).split(path.sep).join('/');
    return super.time(test) ?? committed[relative];
  }
}
