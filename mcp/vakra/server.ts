import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { DatabaseInfo } from '../../core/model.js';
import { packageVersion } from '../../core/package-root.js';
import type { EnvironmentOptions } from '../../eval/environment.js';
import { VakraSession } from './session.js';
import type { Universe } from './universes.js';

/**
 * `nl2api mcp --protocol vakra`: a server IBM VAKRA's benchmark runner starts per domain for
 * capability 1 (its mcp_connection_config.yaml `command`/`args`, the domain in `MCP_DOMAIN`),
 * with the tools, arguments, handles and answers of VAKRA's own router server
 * (session.ts), run on nl2api's runtime. A server per client session.
 */

export interface VakraServerOptions {
  /** The domain's universes, the first one current until `get_data` switches. */
  universes: ReadonlyMap<string, Universe>;
  db: DatabaseInfo;
  environment: EnvironmentOptions;
}

export function createVakraServer(options: VakraServerOptions): Server {
  const session = new VakraSession(options.universes, options.db, options.environment);
  const server = new Server(
    { name: `nl2api VAKRA capability 1 (${options.db.dbId})`, version: packageVersion() },
    { capabilities: { tools: {} } },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: await session.tools() }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const reply = await session.call(request.params.name, request.params.arguments ?? {});
    return { content: [{ type: 'text', text: reply.text }], ...(reply.isError ? { isError: true } : {}) };
  });
  return server;
}
