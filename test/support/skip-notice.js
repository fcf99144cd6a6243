/**
 * Part of the jest global setup (global-setup.js): says once, before any test runs, which
 * tests this environment skips and why (gates.js), so a green run without ../shared or Redis
 * does not pass for a full one.
 */
import { closedGates } from './gates.js';

export default function skipNotice(globalConfig) {
  // Only the files this run would have run (a subset on the command line names fewer).
  const pattern = globalConfig.testPathPattern ? new RegExp(globalConfig.testPathPattern, 'i') : undefined;
  const lines = closedGates().flatMap((gate) => {
    const files = gate.files.filter((file) => !pattern || pattern.test(file));
    return files.length ? [`  skipped: ${gate.what} ${files.join(', ')}: ${gate.reason}`] : [];
  });
  process.stderr.write(
    lines.length ? `\nnl2api tests: some are skipped\n${lines.join('\n')}\n\n` : '\nnl2api tests: nothing skipped\n\n',
  );
}
