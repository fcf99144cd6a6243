import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * A module to fork that sits beside the module at `fromUrl` (its `import.meta.url`), with
 * that module's extension: `.js` once built, `.ts` under jest/tsx, where the child needs
 * tsx's loader (resolved from here, so that it does not depend on the working directory).
 */
export function siblingModule(fromUrl: string, name: string): { path: string; execArgv: string[] } {
  const here = fileURLToPath(fromUrl);
  const extension = path.extname(here);
  const modulePath = path.join(path.dirname(here), `${name}${extension}`);
  if (extension !== '.ts') return { path: modulePath, execArgv: [] };
  const tsx = createRequire(import.meta.url).resolve('tsx');
  return { path: modulePath, execArgv: ['--import', pathToFileURL(tsx).href] };
}
