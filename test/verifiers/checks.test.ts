import type { Verdict } from '../../core/model.js';
import { REST_CHECKS, runChecks, SEQUENCE_CHECKS, type Check } from '../../verifiers/checks.js';

const pass = (category: string): Verdict => ({ ok: true, category, message: '' });
const fail = (category: string): Verdict => ({ ok: false, category, message: `${category} message` });

describe('runChecks', () => {
  it('runs every check in order, keyed by name; the first failure is the rejection', async () => {
    const ran: string[] = [];
    const checks: Check<null>[] = [
      { name: 'format', run: () => (ran.push('format'), fail('format:bad')) },
      { name: 'execution', run: () => (ran.push('execution'), fail('execution:sql_error')) },
    ];
    const { verification, failed } = await runChecks(checks, null);
    expect(ran).toEqual(['format', 'execution']);
    expect(Object.keys(verification)).toEqual(['format', 'execution']);
    expect(failed).toEqual(fail('format:bad'));
  });

  it('does not run a check whose prerequisite failed: it is <check>:not_run', async () => {
    let runs = 0;
    const run = () => (runs++, pass('never'));
    const checks: Check<null>[] = [
      { name: 'execution', run: () => fail('execution:timeout') },
      { name: 'semantic', needs: 'execution', run },
    ];
    const { verification } = await runChecks(checks, null);
    expect(runs).toBe(0);
    expect(verification).toEqual({
      execution: fail('execution:timeout'),
      semantic: { ok: false, category: 'semantic:not_run', message: 'the execution check failed' },
    });
  });

  it('takes a new check as one more entry: its verdict is recorded and can reject', async () => {
    const noEmptyAnswer: Check<{ rows: number }> = {
      name: 'non_empty',
      run: (s) => (s.rows ? pass('rows') : fail('non_empty:empty')),
    };
    const { verification, failed } = await runChecks([noEmptyAnswer], { rows: 0 });
    expect(verification).toEqual({ non_empty: fail('non_empty:empty') });
    expect(failed?.category).toBe('non_empty:empty');
  });

  it('leaves no verdict of a check that does not apply to the subject', async () => {
    const checks: Check<{ keys: number }>[] = [
      { name: 'format', run: () => pass('format_ok') },
      { name: 'dependencies', applies: (s) => s.keys > 0, run: () => fail('dependencies:perturbed-1') },
    ];
    expect(await runChecks(checks, { keys: 0 })).toEqual({ verification: { format: pass('format_ok') } });
    expect((await runChecks(checks, { keys: 1 })).failed?.category).toBe('dependencies:perturbed-1');
  });

  it('lists format, execution, semantic, differential for sequences and REST calls alike; sequences with data keys also dependencies', () => {
    const names = ['format', 'execution', 'semantic', 'differential'];
    expect(SEQUENCE_CHECKS.map((c) => c.name)).toEqual([
      'format',
      'execution',
      'semantic',
      'dependencies',
      'differential',
    ]);
    expect(REST_CHECKS.map((c) => c.name)).toEqual(names);
  });
});
