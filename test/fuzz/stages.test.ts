import path from 'node:path';
import { removeTempDirs, tempDir } from '../sql/fixtures.js';
import {
  FUZZ_DATABASES,
  FUZZ_LIMIT_MS,
  FUZZ_N,
  FUZZ_SEED,
  fuzzStatements,
  printTally,
  readFuzzSchema,
  runSqlStagesDirectly,
  writeFuzzSource,
} from './harness.js';
import { generateStatements } from './sql-grammar.js';

/**
 * The grammar fuzzer, gold bypassed: every statement (SQLite accepts it or not) through
 * parse, slot.decompose, sel.expand, REST's template synthesizer, its format check and the
 * dedup canonical form. Accepted or a categorized rejection, never `internal_error`.
 * `npm run fuzz` runs 10,000 statements and prints the tally (harness.ts).
 */

afterAll(removeTempDirs);

test('the generator is deterministic', () => {
  const schema = readFuzzSchema(path.join(FUZZ_DATABASES[0].folder, 'bookstore.sqlite'));
  expect(generateStatements(schema, FUZZ_SEED, 50)).toEqual(generateStatements(schema, FUZZ_SEED, 50));
  expect(generateStatements(schema, FUZZ_SEED + 1, 50)).not.toEqual(generateStatements(schema, FUZZ_SEED, 50));
});

test(
  'SQL-reading stages: every statement accepted or categorized, no internal error',
  async () => {
    const dir = tempDir('nl2api-fuzz-');
    const source = writeFuzzSource(path.join(dir, 'source'), FUZZ_DATABASES, fuzzStatements());
    const { tally, internalErrors } = await runSqlStagesDirectly(source, path.join(dir, 'out'));
    printTally(`fuzz: ${FUZZ_N} statements (seed ${FUZZ_SEED}), gold bypassed, by stage and outcome`, tally);
    expect(internalErrors.slice(0, 5).map((e) => ({ ...e, sql: source.statements.get(e.id)?.sql }))).toEqual([]);
    // The fuzzer reaches past parsing: many statements parse, decompose and expand.
    expect(tally.get('parse:accepted') ?? 0).toBeGreaterThan(FUZZ_N * 0.4);
    expect(tally.get('sel.expand:accepted') ?? 0).toBeGreaterThan(FUZZ_N * 0.2);
  },
  FUZZ_LIMIT_MS,
);
