import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { parseConfig } from '../config/load.js';
import type { Formulation } from '../core/model.js';
import { loadEvalDataset } from '../eval/dataset.js';
import { openLiveTools } from '../eval/live-tools.js';
import { replaySample } from '../mcp/replay.js';
import { createMcpServer, serveHttp } from '../mcp/server.js';

/**
 * `nl2api mcp` on a generated BIRD dev output: every published sample of each formulation
 * replayed through the SDK's client over Streamable HTTP, a session per sample (issue 14's bar:
 * 100% equal to the recorded output), with the calls per second it sustains (one client).
 */

/** Outputs sent whole (the CLI's default sends 1000 rows; a few BIRD answers are longer). */
const WHOLE = 1_000_000;

export interface McpFigures {
  formulation: Formulation;
  samples: number;
  equal: number;
  calls: number;
  seconds: number;
  /** A few of the samples that were not equal, and why. */
  problems: string[];
}

export async function mcpBench(output: string, birdDir: string, formulation: Formulation): Promise<McpFigures> {
  const dataset = await loadEvalDataset(output, { formulation });
  const live = await openLiveTools(dataset, birdDir, parseConfig({ source: birdDir, progress: 'none' }));
  const figures: McpFigures = { formulation, samples: 0, equal: 0, calls: 0, seconds: 0, problems: [] };
  const started = performance.now();
  try {
    for (const db of dataset.databases.keys()) {
      const server = await serveHttp(() =>
        createMcpServer({ dataset, db, environment: live.environment, maxRows: WHOLE }),
      );
      try {
        for (const item of dataset.items.filter((i) => i.db === db)) {
          const client = new Client({ name: 'nl2api-bench', version: '1' });
          await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
          try {
            const replay = await replaySample(client, item);
            figures.samples++;
            figures.calls += replay.calls;
            if (replay.equal) figures.equal++;
            else if (figures.problems.length < 5) figures.problems.push(`${item.key}: ${replay.problem}`);
          } finally {
            await client.close();
          }
        }
      } finally {
        await server.close();
      }
    }
  } finally {
    await live.close();
  }
  figures.seconds = (performance.now() - started) / 1000;
  return figures;
}

export function mcpLine(f: McpFigures): string {
  const share = f.samples ? ((100 * f.equal) / f.samples).toFixed(1) : '0';
  return (
    `mcp ${f.formulation.toUpperCase()} over Streamable HTTP: ${f.equal}/${f.samples} samples replayed to their recorded output (${share}%, target 100%), ` +
    `${f.calls} calls in ${f.seconds.toFixed(1)} s = ${Math.round(f.calls / f.seconds)} calls/s (one client, a session per sample)` +
    f.problems.map((p) => `\n  not equal: ${p}`).join('')
  );
}
