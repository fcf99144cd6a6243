import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { generateDemo, run } from './fixtures.js';

/**
 * `nl2api eval --predictions`: another agent's calls, replayed through the live tools and
 * scored as a model's reply. The dataset's own sample files are gold predictions; every item
 * taken out of them is one fewer completed, and what the files hold beyond the items is said.
 */

let root: string;
beforeAll(async () => {
  root = await generateDemo();
}, 120_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

const samples = (formulation: string) =>
  readdirSync(path.join(root, 'dataset', formulation))
    .filter((f) => f.endsWith('.jsonl'))
    .flatMap((f) =>
      readFileSync(path.join(root, 'dataset', formulation, f), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => ({
          ...(JSON.parse(line) as { sample_id: string; output: unknown[] }),
          db: f.replace(/\.jsonl$/, ''),
        })),
    );

describe.each(['slot', 'sel', 'rest'] as const)('%s', (formulation) => {
  test('the published samples as predictions complete every item', async () => {
    const result = await run(root, {
      formulation,
      predictions: { path: path.join(root, 'dataset', formulation), format: 'nl2api' },
      report: `gold-${formulation}`,
    });
    const [summary] = result.summary.models;
    expect(summary.model).toBe(`predictions:${formulation}`);
    expect(summary.completion.mean).toBe(1);
    expect(summary.errors.none).toBe(summary.attempts);
    expect(result.summary.predictions).toMatchObject({ missing: [], unknown: [], invalid: [], duplicates: [] });
  });
});

test('ten items taken out score exactly ten fewer; unknown ids and unreadable lines are listed, never fatal', async () => {
  const records = samples('slot');
  const dir = path.join(root, 'predictions-cut');
  mkdirSync(dir, { recursive: true });
  const removed = records.slice(5, 15).map((r) => r.sample_id);
  const lines = [
    ...records.filter((r) => !removed.includes(r.sample_id)).map((r) => ({ id: r.sample_id, calls: r.output })),
    { id: 'no-such-item', calls: [] },
  ].map((r) => JSON.stringify(r));
  // A native-style agent: ids, no labels, references by id.
  writeFileSync(path.join(dir, 'agent.jsonl'), [...lines, '{"id": "broken", "calls": 7}', 'not json'].join('\n'));
  const result = await run(root, {
    formulation: 'slot',
    predictions: { path: path.join(dir, 'agent.jsonl'), format: 'nl2api' },
    report: 'cut',
  });
  const [summary] = result.summary.models;
  expect(summary.attempts).toBe(records.length);
  expect(Math.round(summary.completion.mean * summary.attempts)).toBe(records.length - 10);
  expect(result.summary.predictions!.missing.sort()).toEqual([...removed].sort());
  expect(result.summary.predictions!.unknown).toEqual(['no-such-item']);
  expect(result.summary.predictions!.invalid).toEqual([
    `agent.jsonl record ${records.length - 10 + 2}: "broken": no list of calls ("calls", "output" or "attempt.parsed")`,
    `agent.jsonl record ${records.length - 10 + 3}: not JSON`,
  ]);
});

test('an agent that names outputs by call id and by position, with no labels, is scored right', async () => {
  const records = samples('slot');
  const dir = path.join(root, 'predictions-ids');
  mkdirSync(dir, { recursive: true });
  const withIds = records.map((r) => {
    const calls = r.output as { name: string; arguments: Record<string, unknown>; label: string }[];
    const ids = new Map(calls.map((c, i) => [c.label, i % 2 ? `call_${i}` : `tool-${i}-x`]));
    const refer = (value: unknown): unknown =>
      typeof value === 'string'
        ? value.replace(/^\$([^.$]+)((?:\.[^$]*)?)\$$/, (all, label: string, field: string) => {
            const i = calls.findIndex((c) => c.label === label);
            // Even calls by their id, odd ones by position.
            return i < 0 ? all : `$${i % 2 ? `call_${i}` : ids.get(label)}${field}$`;
          })
        : Array.isArray(value)
          ? value.map(refer)
          : value !== null && typeof value === 'object'
            ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, refer(v)]))
            : value;
    return {
      id: r.sample_id,
      calls: calls.map((c) => ({ id: ids.get(c.label), name: c.name, arguments: refer(c.arguments) })),
    };
  });
  writeFileSync(path.join(dir, 'a.json'), JSON.stringify(withIds.slice(0, 20)));
  writeFileSync(
    path.join(dir, 'b.jsonl'),
    withIds
      .slice(20)
      .map((r) => JSON.stringify(r))
      .join('\n'),
  );
  writeFileSync(path.join(dir, 'c.jsonl'), '{"id": "x", "calls": 7}\nnot json\n');
  const result = await run(root, { formulation: 'slot', predictions: { path: dir, format: 'nl2api' }, report: 'ids' });
  const [summary] = result.summary.models;
  expect(summary.completion.mean).toBe(1);
  expect(summary.slotF1.mean).toBe(1);
  expect(result.summary.predictions!.invalid).toEqual([
    'c.jsonl record 1: "x": no list of calls ("calls", "output" or "attempt.parsed")',
    'c.jsonl record 2: not JSON',
  ]);
  expect(result.summary.predictions!.unknown).toEqual([]);
});

test('ReAct replay goes past a failed call, as the agent did; a direct replay stops there', async () => {
  const [record] = samples('slot');
  const [first, ...rest] = record.output as { name: string; arguments: Record<string, unknown>; label: string }[];
  const wrong = { ...first, arguments: { ...first.arguments, key_name: 'no_such_key' } };
  const file = path.join(root, 'recovered.jsonl');
  writeFileSync(file, JSON.stringify({ id: record.sample_id, calls: [wrong, first, ...rest] }));
  const replay = (mode: 'direct' | 'react') =>
    run(root, {
      mode,
      limit: 1,
      dbIds: [record.db],
      predictions: { path: file, format: 'nl2api' },
      report: `recovered-${mode}`,
    });
  const react = (await replay('react')).lines[0].attempt!;
  expect(react.steps.map((s) => s.ok)).toEqual([false, ...record.output.map(() => true)]);
  expect(react.scores.completed).toBe(true);
  const direct = (await replay('direct')).lines[0].attempt!;
  expect(direct.scores.completed).toBe(false);
  expect(direct.scores.answer.category).toBe('execution:tool:unknown_key');
});

test('--predictions refuses settings that change the tools the agent had', async () => {
  await expect(
    run(root, {
      obfuscate: true,
      predictions: { path: path.join(root, 'dataset', 'slot'), format: 'nl2api' },
      report: 'obfuscated-predictions',
    }),
  ).rejects.toThrow(/no --sql-baseline, --obfuscate or --shortlist/);
});
