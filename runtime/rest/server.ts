import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import { EndpointSpecSchema, type ArgumentValue, type EndpointSpec } from '../../generators/rest/spec.js';
import type { DatabaseInfo } from '../../pipeline/model.js';
import type { SqlExecutor } from '../sql/executor.js';
import { bindPlaceholders } from '../../generators/rest/bind.js';
import { placeholderProblem } from '../../generators/rest/placeholders.js';
import { registerDocs } from './docs.js';
import { notFound, toErrorResponse } from './errors.js';
import { restOpenApi } from './openapi.js';
import { checkFinite, DEFAULT_MAX_STRING_LENGTH, querystringSchema } from './parameters.js';

/**
 * The live REST server (DESIGN.md "REST"): every endpoint spec served as a GET with query
 * parameters, validated from its ParameterSpecs, its SQL run read-only through the
 * executor with bound parameters and a timeout; `/openapi.json` and interactive `/docs`.
 * Endpoint specs are data: the server renders them, nothing in them runs as code.
 */

export interface RestDatabase {
  db: DatabaseInfo;
  endpoints: EndpointSpec[];
}

export interface RestServerOptions {
  databases: RestDatabase[];
  /** Runs the SQL; owned by the caller (close() leaves it open). Use the killable pool for a real timeout. */
  executor: SqlExecutor;
  /** Per-query time limit: a query past it is stopped and answered 504. */
  timeoutMs: number;
  /** Default 127.0.0.1: loopback only unless told otherwise. */
  host?: string;
  /** Default 0: an ephemeral port. */
  port?: number;
  title: string;
  version: string;
  /** Longest accepted string parameter (default 1000 characters). */
  maxStringLength?: number;
  /** Where failures are logged with their details (default: Fastify's pino logger at level warn). */
  logger?: FastifyBaseLogger;
}

export interface RestServer {
  /** Base URL, e.g. `http://127.0.0.1:39123`. */
  url: string;
  /** The OpenAPI 3.1 document served at /openapi.json. */
  openapi: object;
  close(): Promise<void>;
}

export const OPENAPI_PATH = '/openapi.json';

export async function createRestServer(options: RestServerOptions): Promise<RestServer> {
  const maxStringLength = options.maxStringLength ?? DEFAULT_MAX_STRING_LENGTH;
  const routes = checkedRoutes(options.databases);
  const openapi = restOpenApi(
    routes.map((route) => route.endpoint),
    { title: options.title, version: options.version, maxStringLength },
  );

  const app: FastifyInstance = Fastify({
    ...(options.logger ? { loggerInstance: options.logger } : { logger: { level: 'warn' } }),
    // Failures are logged by the error handler; a line per request would drown them.
    logController: new LogController({ disableRequestLogging: true }),
    // Query strings are text: coerce to the declared types, but refuse (never drop)
    // unknown parameters and never turn a repeated parameter into a list.
    ajv: { customOptions: { coerceTypes: true, removeAdditional: false, useDefaults: false, allErrors: true } },
  });

  app.setErrorHandler((error, request, reply) => {
    const response = toErrorResponse(error, options.timeoutMs);
    if (response.internal) request.log.error({ err: error, url: request.url, routeUrl: request.routeOptions.url }, 'REST request failed');
    return reply.status(response.status).send(response.body);
  });
  app.setNotFoundHandler((_request, reply) => reply.status(404).send(notFound()));

  const document = JSON.stringify(openapi);
  app.get(OPENAPI_PATH, (_request, reply) => reply.type('application/json; charset=utf-8').send(document));
  await registerDocs(app, openapi);

  for (const { db, endpoint } of routes) {
    app.get(endpoint.path, { schema: { querystring: querystringSchema(endpoint.parameters, { maxStringLength }) } }, async (request) => {
      const args = request.query as Record<string, ArgumentValue>;
      checkFinite(endpoint.parameters, args);
      const bound = bindPlaceholders(endpoint.sql, args, endpoint.parameters);
      const result = await options.executor.run({ dbPath: db.path, sql: bound.sql, params: bound.params, timeoutMs: options.timeoutMs });
      return { columns: result.columns, rows: result.rows };
    });
  }

  try {
    await app.listen({ host: options.host ?? '127.0.0.1', port: options.port ?? 0 });
  } catch (error) {
    await app.close();
    throw error;
  }
  return { url: urlOf(app.server.address() as AddressInfo), openapi, close: () => app.close() };
}

interface Route {
  db: DatabaseInfo;
  endpoint: EndpointSpec;
}

/**
 * Every endpoint valid against its schema, every placeholder declared, and no two
 * endpoints with the same path or operationId: refused at startup, not per request.
 */
function checkedRoutes(databases: readonly RestDatabase[]): Route[] {
  const paths = new Set<string>();
  const operationIds = new Set<string>();
  return databases.flatMap(({ db, endpoints }) =>
    endpoints.map((candidate) => {
      const parsed = EndpointSpecSchema.safeParse(candidate);
      if (!parsed.success) throw new Error(`endpoint ${candidate.operationId} of ${db.dbId} is invalid: ${parsed.error.message}`);
      const endpoint = parsed.data;
      if (paths.has(endpoint.path)) throw new Error(`two endpoints share the path ${endpoint.path}`);
      if (operationIds.has(endpoint.operationId)) throw new Error(`two endpoints share the operationId ${endpoint.operationId}`);
      paths.add(endpoint.path);
      operationIds.add(endpoint.operationId);
      const declared = new Set(endpoint.parameters.map((param) => param.name));
      const problem = placeholderProblem(endpoint.sql, declared);
      if (problem) throw new Error(`endpoint ${endpoint.operationId} uses ${problem}`);
      return { db, endpoint };
    }),
  );
}

function urlOf(address: AddressInfo): string {
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}
