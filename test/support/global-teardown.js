/** Removes the run's folder (global-setup.js). */
import { rmSync } from 'node:fs';

export default function globalTeardown() {
  const dir = process.env.NL2API_TEST_RUN_DIR;
  if (dir) rmSync(dir, { recursive: true, force: true });
}
