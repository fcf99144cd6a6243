import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { parseConfig } from '../config/load.js';
import type { Formulation } from '../core/model.js';
import { loadEvalDataset } from '../eval/dataset.js';
import { OBSERVED_ROWS } from '../eval/environment.js';
import { openLiveTools } from '../eval/live-tools.js';
import { replaySample } from '../mcp/replay.js';
import { createMcpServer, serveHttp, sharedValidator } from '../mcp/server.js';

/**
 * `nl2api mcp` on a generated BIRD dev output: every published sample of each formulation
 * replayed through the SDK's client over Streamable HTTP, a session per sample (issue 14's bar:
 * 100% equal to the recorded output), with the calls per second it sustains (one client).
 * SLOT and SEL tables longer than the server's rows are previewed with their handles, and the
 * answers among them read whole by handle (issue 35); REST responses are sent whole (a few
 * BIRD answers are longer than the CLI's 1000 rows, and a response has no handle to read on).
 */

/** Rows of a SLOT/SEL output sent whole, past them a preview: as many as a model is shown in an evaluation. */
export const MCP_BENCH_ROWS = OBSERVED_ROWS;
const WHOLE = 1_000_000;

export interface McpFigures {
  formulation: Formulation;
  /** Rows sent whole (past them: a preview). */
  rows: number;
  samples: number;
  equal: number;
  /** The samples' calls. */
  calls: number;
  /** `read_output` calls that read previewed answers whole (beside `calls`, in `seconds`). */
  reads: number;
  seconds: number;
  /** A few of the samples that were not equal, and why. */
  problems: string[];
}

export async function mcpBench(
  output: string,
  birdDir: string,
  formulation: Formulation,
  rows = formulation === 'rest' ? WHOLE : MCP_BENCH_ROWS,
): Promise<McpFigures> {
  const dataset = await loadEvalDataset(output, { formulation });
  const live = await openLiveTools(dataset, birdDir, parseConfig({ source: birdDir, progress: 'none' }));
  const figures: McpFigures = { formulation, rows, samples: 0, equal: 0, calls: 0, reads: 0, seconds: 0, problems: [] };
  const started = performance.now();
  try {
    for (const db of dataset.databases.keys()) {
      const server = await serveHttp(() =>
        createMcpServer({ dataset, db, environment: live.environment, maxRows: rows }),
      );
      try {
        for (const item of dataset.items.filter((i) => i.db === db)) {
          const client = new Client({ name: 'nl2api-bench', version: '1' }, { jsonSchemaValidator: sharedValidator() });
          await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
          try {
            const replay = await replaySample(client, item);
            figures.samples++;
            figures.calls += replay.calls;
            figures.reads += replay.reads;
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

/** Issue 35's bar for SLOT replay over MCP. */
const CALLS_PER_SECOND_TARGET = 100;

export function mcpLine(f: McpFigures): string {
  const share = f.samples ? ((100 * f.equal) / f.samples).toFixed(1) : '0';
  return (
    `mcp ${f.formulation.toUpperCase()} over Streamable HTTP: ${f.equal}/${f.samples} samples replayed to their recorded output (${share}%, target 100%), ` +
    `${f.calls} calls in ${f.seconds.toFixed(1)} s = ${Math.round(f.calls / f.seconds)} calls/s (target >= ${CALLS_PER_SECOND_TARGET}; one client, a session per sample; ` +
    (f.rows >= WHOLE
      ? 'outputs whole)'
      : `outputs past ${f.rows} rows previewed, ${f.reads} reads of previewed answers beside the calls)`) +
    f.problems.map((p) => `\n  not equal: ${p}`).join('')
  );
}
