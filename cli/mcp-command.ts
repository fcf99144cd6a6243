import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { Command, Option } from 'commander';
import { loadConfig } from '../config/load.js';
import { FORMULATIONS, type Formulation } from '../core/model.js';
import { UserFacingError } from '../core/errors.js';
import type { EvalDataset } from '../eval/dataset.js';
import type { EnvironmentOptions } from '../eval/environment.js';
import { positiveInt } from './args.js';
import { CONFIG_DEFAULTS, withDefault } from './defaults.js';

/**
 * `nl2api mcp`: a generated dataset's tools, of one database, over the Model Context Protocol:
 * nl2api's (mcp/server.ts: one formulation's published tools, outputs under labels) or IBM
 * VAKRA's capability 1 (mcp/vakra/: VAKRA's tools, handles and answers, a universe per SLOT
 * or SEL sample). On stdin/stdout for a client that starts it, or over Streamable HTTP
 * (127.0.0.1 unless told otherwise). The database is `--db`, else `MCP_DOMAIN` (how VAKRA's
 * runner names the domain of the server it starts). The server code loads only when the
 * command runs.
 */

interface McpFlags {
  out: string;
  source: string;
  protocol: 'nl2api' | 'vakra';
  formulation?: Formulation;
  db?: string;
  universes?: string;
  transport: 'stdio' | 'http';
  host: string;
  port: number;
  rows: number;
  sqlWorkers?: number;
  config?: string;
}

/**
 * Rows of an output sent whole; past them, the first ones and `more: true` (SLOT and SEL: a
 * preview with the row count and the handle `read_output` reads the rest by).
 */
export const MCP_ROWS = 1000;

export function addMcpCommand(program: Command): void {
  program
    .command('mcp')
    .description("serve a generated dataset's tools (one database, one formulation) over the Model Context Protocol")
    .requiredOption('--out <dir>', 'the output folder of nl2api generate')
    .requiredOption('--source <dir>', 'the dataset source it was generated from (its databases run the tools)')
    .addOption(
      new Option('--protocol <p>', "nl2api: the dataset's published tools; vakra: IBM VAKRA's capability-1 server")
        .choices(['nl2api', 'vakra'])
        .default('nl2api'),
    )
    .addOption(new Option('--formulation <f>', 'nl2api protocol: whose tools (required)').choices([...FORMULATIONS]))
    .option('--db <id>', 'the database (default: $MCP_DOMAIN; required when the output has several)')
    .option('--universes <file>', 'vakra protocol: also the universes of a mcp_tool_universe_id_mapping.yaml')
    .addOption(
      new Option('--transport <t>', 'stdio: this process is the server of one client; http: Streamable HTTP at /mcp')
        .choices(['stdio', 'http'])
        .default('stdio'),
    )
    .option('--host <host>', 'http: interface to bind (loopback unless told otherwise)', '127.0.0.1')
    .option('--port <n>', 'http: port (0: any free one)', (v) => Number.parseInt(v, 10), 8765)
    .option(
      '--rows <n>',
      'rows of an output sent whole (past them, a preview: SLOT/SEL with its handle)',
      positiveInt,
      MCP_ROWS,
    )
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
  const db = flags.db ?? (process.env.MCP_DOMAIN || undefined);
  const served = flags.protocol === 'vakra' ? await vakraServer(flags, db) : await nl2apiServer(flags, db);
  const { openLiveTools } = await import('../eval/live-tools.js');
  const { serveHttp, serveStdio } = await import('../mcp/server.js');
  const live = await openLiveTools(served.dataset, flags.source, config);
  const newServer = () => served.create(live.environment);
  try {
    if (flags.transport === 'stdio') {
      await serveStdio(newServer());
      return 0;
    }
    const server = await serveHttp(newServer, flags.host, flags.port);
    process.stderr.write(`MCP (${served.what}) at ${server.url}\n`);
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

/** What a protocol serves: the dataset whose databases its tools run on, and a server per client session. */
interface Served {
  dataset: EvalDataset;
  what: string;
  create(environment: EnvironmentOptions): Server;
}

async function nl2apiServer(flags: McpFlags, db: string | undefined): Promise<Served> {
  const { formulation } = flags;
  if (!formulation) throw new UserFacingError('nl2api mcp: --formulation is required (or --protocol vakra)');
  const { loadEvalDataset } = await import('../eval/dataset.js');
  const { createMcpServer } = await import('../mcp/server.js');
  const dataset = await loadEvalDataset(flags.out, { formulation, ...(db ? { dbIds: [db] } : {}) });
  const dbs = [...dataset.databases.keys()];
  if (dbs.length !== 1)
    throw new UserFacingError(
      dbs.length === 0
        ? `${flags.out} has no ${formulation} samples${db ? ` of ${db}` : ''}`
        : `${flags.out} has ${dbs.length} databases: choose one with --db (${dbs.join(', ')})`,
    );
  return {
    dataset,
    what: `${formulation}, ${dbs[0]}`,
    create: (environment) => createMcpServer({ dataset, db: dbs[0], environment, maxRows: flags.rows }),
  };
}

async function vakraServer(flags: McpFlags, db: string | undefined): Promise<Served> {
  if (!db) throw new UserFacingError('nl2api mcp --protocol vakra serves one domain: give --db or set MCP_DOMAIN');
  const { loadUniverses } = await import('../mcp/vakra/universes.js');
  const { createVakraServer } = await import('../mcp/vakra/server.js');
  const { universes, datasets } = await loadUniverses(flags.out, db, flags.universes);
  const [dataset] = datasets;
  return {
    dataset,
    what: `VAKRA capability 1, ${db}, ${universes.size} universes`,
    create: (environment) => {
      const info = environment.databases.get(db);
      if (!info) throw new Error(`database ${db} is not open`);
      return createVakraServer({ universes, db: info, environment });
    },
  };
}
