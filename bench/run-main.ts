import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

/**
 * Runs a bench module's `main` when the module is the one node was started with (not when a
 * larger bench imports it); a failure is printed under `label` and sets the exit code.
 */
export function runIfMain(moduleUrl: string, label: string, main: () => Promise<void>): void {
  const invoked = process.argv[1] ? pathToFileURL(realpathOr(process.argv[1])).href : '';
  if (invoked !== moduleUrl) return;
  main().catch((error: unknown) => {
    process.stderr.write(`${label}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  });
}

function realpathOr(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return file;
  }
}
