import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildProgram } from '../../cli/main.js';
import { createChatModel } from '../../generators/llm/chat-model.js';
import { LlmClient } from '../../generators/llm/client.js';
import { LlmProviderSchema, type LlmProvider } from '../../generators/llm/config.js';
import type { LlmProviderEntry, ProviderSettings } from '../../generators/llm/provider-entry.js';
import { PROVIDERS } from '../../generators/llm/providers.js';
import { FakeClock, llmConfig, ScriptedChatModel } from './helpers.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

describe('PROVIDERS, the one list of LLM providers', () => {
  test('the config schema accepts exactly its names, in its order', () => {
    expect(LlmProviderSchema.options).toEqual(Object.keys(PROVIDERS));
  });

  test("--llm-provider offers exactly its names, and the help names each provider's key variable", () => {
    for (const command of ['generate', 'demo']) {
      const option = buildProgram()
        .commands.find((c) => c.name() === command)!
        .options.find((o) => o.long === '--llm-provider')!;
      expect(option.argChoices).toEqual(Object.keys(PROVIDERS));
      for (const [name, { apiKey }] of Object.entries(PROVIDERS)) {
        expect(option.description).toContain(`${name}: ${apiKey ? apiKey.env : 'none'}`);
      }
    }
  });

  test("no module imports a provider's LangChain package up front: only its entry's create does, when used", () => {
    const sources = ['config', 'generators', 'pipeline', 'cli'].flatMap((folder) => tsFiles(path.join(root, folder)));
    const eager = sources.filter((file) =>
      /\bfrom\s+['"]@langchain\/(mistralai|openai|ollama)['"]/.test(readFileSync(file, 'utf8')),
    );
    expect(eager.map((file) => path.relative(root, file))).toEqual([]);
  });
});

describe('a new provider is one registry entry', () => {
  const received: { settings: ProviderSettings; apiKey: string | undefined }[] = [];
  const scripted: LlmProviderEntry = {
    apiKey: { env: 'SCRIPTED_API_KEY', optionalWithBaseUrl: true },
    async create(settings, apiKey) {
      received.push({ settings, apiKey });
      return new ScriptedChatModel(['{"answer": 42}']);
    },
  };
  const registry = { ...PROVIDERS, scripted };
  // The schema's enum is PROVIDERS' names; a registry extended at test time is not in it.
  const config = (overrides: { baseUrl?: string } = {}) => ({
    ...llmConfig(overrides),
    provider: 'scripted' as LlmProvider,
  });

  beforeEach(() => received.splice(0));

  test('createChatModel builds it with the key its rule names, and LlmClient calls it like any other', async () => {
    const model = await createChatModel(config(), { SCRIPTED_API_KEY: 'k-1' }, registry);
    expect(received).toEqual([
      { settings: expect.objectContaining({ model: 'test-model', timeoutMs: 60_000 }), apiKey: 'k-1' },
    ]);
    const client = new LlmClient({ model, config: config(), clock: new FakeClock() });
    expect((await client.complete([{ role: 'user', content: 'q' }])).text).toBe('{"answer": 42}');
  });

  test('its key rule applies: named when missing, not needed with a base URL', async () => {
    await expect(createChatModel(config(), {}, registry)).rejects.toThrow(/^SCRIPTED_API_KEY is not set/);
    await createChatModel(config({ baseUrl: 'http://127.0.0.1:9/v1' }), {}, registry);
    expect(received.map((r) => r.apiKey)).toEqual(['unused']);
  });
});

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return tsFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}
