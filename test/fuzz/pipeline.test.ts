import path from 'node:path';
import { removeTempDirs, tempDir } from '../sql/fixtures.js';
import {
  FUZZ_DATABASES,
  FUZZ_LIMIT_MS,
  FUZZ_N,
  FUZZ_SEED,
  fuzzStatements,
  printTally,
  runPipeline,
  writeFuzzSource,
} from './harness.js';

/**
 * The grammar fuzzer through the whole pipeline (`generate`: SLOT, SEL and REST with the
 * template synthesizer, on a BIRD-layout copy of the demo databases): every statement ends
 * accepted or in a categorized rejection, never `internal_error`. `npm run fuzz` runs
 * 10,000 statements and prints the rejections by formulation, stage and category.
 */

afterAll(removeTempDirs);

test(
  'the whole pipeline: every statement accepted or categorized, no internal error',
  async () => {
    const dir = tempDir('nl2api-fuzz-');
    const source = writeFuzzSource(path.join(dir, 'source'), FUZZ_DATABASES, fuzzStatements());
    const { tally, rejections } = await runPipeline(source, path.join(dir, 'out'));
    printTally(
      `fuzz: ${FUZZ_N} statements (seed ${FUZZ_SEED}) through generate: rejections by formulation, stage and category`,
      tally,
    );
    const internal = rejections.filter((r) => r.category === 'internal_error').slice(0, 5);
    expect(internal.map((r) => ({ ...r, sql: source.statements.get(r.id)?.sql }))).toEqual([]);
    // Statements reach execute and verify: a good share become verified SLOT samples.
    expect(rejections.filter((r) => r.formulation === 'slot').length).toBeLessThan(FUZZ_N * 0.8);
  },
  FUZZ_LIMIT_MS,
);
