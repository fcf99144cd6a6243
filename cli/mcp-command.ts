import { Command, Option } from 'commander';
import { loadConfig } from '../config/load.js';
import { FORMULATIONS, type Formulation } from '../core/model.js';
import { UserFacingError } from '../core/errors.js';
import { positiveInt } from './args.js';
import { CONFIG_DEFAULTS, withDefault } from './defaults.js';

/**
 * `nl2api mcp`: a generated dataset's tools, of one database and formulation, over the Model
 * Context Protocol (mcp/server.ts): on stdin/stdout for a client that starts it, or over
 * Streamable HTTP (127.0.0.1 unless told otherwise). The server code loads only when the
 * command runs.
 */

interface McpFlags {
  out: string;
  source: string;
  formulation: Formulation;
  db?: string;
  transport: 'stdio' | 'http';
  host: string;
  port: number;
  rows: number;
  sqlWorkers?: number;
  config?: string;
}

/** Rows of an output sent whole (past them, the first ones and `more: true`). */
export const MCP_ROWS = 1000;

export function addMcpCommand(program: Command): void {
  program
    .command('mcp')
    .description("serve a generated dataset's tools (one database, one formulation) over the Model Context Protocol")
    .requiredOption('--out <dir>', 'the output folder of nl2api generate')
    .requiredOption('--source <dir>', 'the dataset source it was generated from (its databases run the tools)')
    .addOption(new Option('--formulation <f>', 'whose tools').choices([...FORMULATIONS]).makeOptionMandatory())
    .option('--db <id>', 'the database (required when the output has several)')
    .addOption(
      new Option('--transport <t>', 'stdio: this process is the server of one client; http: Streamable HTTP at /mcp')
        .choices(['stdio', 'http'])
        .default('stdio'),
    )
    .option('--host <host>', 'http: interface to bind (loopback unless told otherwise)', '127.0.0.1')
    .option('--port <n>', 'http: port (0: any free one)', (v) => Number.parseInt(v, 10), 8765)
    .option('--rows <n>', 'rows of an output sent whole', positiveInt, MCP_ROWS)
    .option('--sql-workers <n>', withDefault('SQL worker processes', CONFIG_DEFAULTS.sqlWorkers), positiveInt)
    .option('--config <file>', 'JSON config file (timeouts; flags override it)')
    .action(async (flags: McpFlags, command: Command) => {
      process.exitCode = await runMcpCommand(flags, command);
    });
}

async function runMcpCommand(flags: McpFlags, command: Command): Promise<number> {
  const given = (key: keyof McpFlags) => command.getOptionValueSource(key) === 'cli';
  const config = await loadConfig({
    file: flags.config,
    flags: given('sqlWorkers') ? { sqlWorkers: flags.sqlWorkers } : {},
  });
  const { loadEvalDataset } = await import('../eval/dataset.js');
  const { openLiveTools } = await import('../eval/live-tools.js');
  const { serveHttp, serveStdio } = await import('../mcp/server.js');
  const dataset = await loadEvalDataset(flags.out, {
    formulation: flags.formulation,
    ...(flags.db ? { dbIds: [flags.db] } : {}),
  });
  const dbs = [...dataset.databases.keys()];
  if (dbs.length !== 1)
    throw new UserFacingError(
      dbs.length === 0
        ? `${flags.out} has no ${flags.formulation} samples${flags.db ? ` of ${flags.db}` : ''}`
        : `${flags.out} has ${dbs.length} databases: choose one with --db (${dbs.join(', ')})`,
    );
  const live = await openLiveTools(dataset, flags.source, config);
  const options = { dataset, db: dbs[0], environment: live.environment, maxRows: flags.rows };
  try {
    if (flags.transport === 'stdio') {
      await serveStdio(options);
      return 0;
    }
    const server = await serveHttp(options, flags.host, flags.port);
    process.stderr.write(`MCP (${flags.formulation}, ${dbs[0]}) at ${server.url}\n`);
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    await server.close();
    return 0;
  } finally {
    await live.close();
  }
}
