import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageRoot } from '../core/package-root.js';

/**
 * How a benchmark starts a module of ours in a child: the build, or the sources through tsx
 * when run with tsx; with the node flags of its shebang (`#!/usr/bin/env -S node <flags>`: the
 * CLI sets its young generation's size there), so the child runs as the installed `nl2api`
 * (and `npm start`) would, and its CPU and memory are what a user gets.
 */
export function nodeArgs(module: string): string[] {
  const fromSources = fileURLToPath(import.meta.url).endsWith('.ts');
  const root = packageRoot();
  const file = fromSources ? path.join(root, `${module}.ts`) : path.join(root, 'dist', `${module}.js`);
  return [...shebangFlags(readFileSync(file, 'utf8')), ...(fromSources ? ['--import', 'tsx'] : []), file];
}

/** The node flags of a `#!/usr/bin/env -S node ...` first line (none for any other). */
export function shebangFlags(text: string): string[] {
  const match = /^#!\S*env -S node((?: +-\S+)*) *$/m.exec(text.slice(0, text.indexOf('\n')));
  return match ? match[1].trim().split(/ +/).filter(Boolean) : [];
}
