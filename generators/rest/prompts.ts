import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { LlmMessage } from '../llm/messages.js';
import { packageRoot } from '../../core/package-root.js';

/**
 * Prompt templates, kept as Markdown in `seeds/prompts/` so that they are read and edited
 * as prose: `<name>.system.md` and `<name>.user.md`, with `{{slot}}` placeholders filled by
 * the code that uses them. The directory is found from the package root, not from this
 * module: the build in dist/ does not copy seeds/.
 */

export interface PromptTemplate {
  readonly name: string;
  /** The template texts as written: put them in a fingerprint so that a prompt edit invalidates cached work. */
  readonly system: string;
  readonly user: string;
  /** The system and user messages with every slot filled. */
  render(values: Readonly<Record<string, string>>): LlmMessage[];
}

const PROMPT_NAME = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const SLOT = /\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}/g;

export function promptsDir(): string {
  return path.join(packageRoot(), 'seeds', 'prompts');
}

/** `rest-judge` → seeds/prompts/rest-judge.system.md and rest-judge.user.md. */
export function loadPrompt(name: string, dir: string = promptsDir()): PromptTemplate {
  if (!PROMPT_NAME.test(name))
    throw new Error(`invalid prompt name ${JSON.stringify(name)}: lowercase words joined by "-"`);
  const system = readFileSync(path.join(dir, `${name}.system.md`), 'utf8');
  const user = readFileSync(path.join(dir, `${name}.user.md`), 'utf8');
  return {
    name,
    system,
    user,
    render(values) {
      const unused = Object.keys(values).filter((key) => !slotNames(system).has(key) && !slotNames(user).has(key));
      // A value for no slot is a typo on one side: fail rather than send a prompt missing it.
      if (unused.length) throw new Error(`prompt ${name} has no slot for ${unused.join(', ')}`);
      return [
        { role: 'system', content: fillSlots(system, values).trim() },
        { role: 'user', content: fillSlots(user, values).trim() },
      ];
    },
  };
}

/**
 * Fills `{{slot}}`s in one pass, so a value that itself contains `{{...}}` (a question, a
 * SQL string) is never expanded. A slot without a value throws.
 */
export function fillSlots(template: string, values: Readonly<Record<string, string>>): string {
  return template.replace(SLOT, (_, slot: string) => {
    if (!Object.hasOwn(values, slot)) throw new Error(`no value for the prompt slot {{${slot}}}`);
    return values[slot];
  });
}

function slotNames(template: string): Set<string> {
  return new Set([...template.matchAll(SLOT)].map((match) => match[1]));
}
