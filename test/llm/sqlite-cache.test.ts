import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LlmClient } from '../../generators/llm/client.js';
import { SqliteLlmCache } from '../../generators/llm/sqlite-cache.js';
import { llmConfig, ScriptedChatModel } from './helpers.js';

describe('SqliteLlmCache', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'nl2api-llm-cache-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  test('stores replies in its own WAL-mode file, across reopenings', async () => {
    const file = join(dir, 'llm.sqlite');
    const cache = new SqliteLlmCache(file);
    expect(await cache.get('k')).toBeUndefined();
    await cache.put('k', '{"a": "ünïcode ✓"}');
    await cache.put('k', 'replaced');
    cache.close();
    const reopened = new SqliteLlmCache(file);
    expect(await reopened.get('k')).toBe('replaced');
    reopened.close();
    const raw = new Database(file, { readonly: true });
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(raw.prepare('SELECT count(*) AS n FROM llm_replies').get()).toEqual({ n: 1 });
    raw.close();
  });

  test('a rerun (new process state, same cache file) makes no call for unchanged prompts', async () => {
    const file = join(dir, 'llm.sqlite');
    const prompts = ['q1', 'q2'].map((q) => [{ role: 'user' as const, content: q }]);
    const run = async (changed: string[]) => {
      const cache = new SqliteLlmCache(file);
      const model = new ScriptedChatModel(['reply']);
      const client = new LlmClient({ model, config: llmConfig(), cache });
      for (const p of [...prompts, ...changed.map((q) => [{ role: 'user' as const, content: q }])])
        await client.complete(p);
      cache.close();
      return model.calls;
    };
    expect(await run([])).toBe(2);
    expect(await run([])).toBe(0);
    expect(await run(['q3'])).toBe(1);
  });
});
