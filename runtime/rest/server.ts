import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from 'fastify';
import type { AddressInfo } from 'node:net';
import {
  EndpointSpecSchema,
  isServed,
  type ArgumentValue,
  type EndpointSpec,
  type ServedEndpointSpec,
} from './spec.js';
import { compileSerializer } from './response.js';
import type { DatabaseInfo } from '../../core/model.js';
import type { SqlExecutor } from '../sql/executor.js';
import { placeholderProblem } from './placeholders.js';
import { DOCS_PREFIX, registerDocs } from './docs.js';
import {
  ALLOWED_METHODS,
  clientError,
  frameworkError,
  methodNotAllowed,
  notFound,
  RETRY_AFTER_S,
  saturated,
  toErrorResponse,
} from './errors.js';
import { restOpenApi } from './openapi.js';
import { runEndpoint } from './endpoint.js';
import { DEFAULT_MAX_STRING_LENGTH, parseQuery, querystringSchema } from './parameters.js';
import { useLazyValidators } from './lazy-validators.js';

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
  /**
   * Queries admitted at once (running or waiting for a SQL worker; default 256): past them a
   * request is answered 503 with Retry-After at once, never queued without bound.
   */
  maxInFlight?: number;
  /**
   * Interactive docs at /docs (default true). The pipeline's own verification server has no
   * reader for them: without, it does not load the docs' bundle (megabytes held for the run).
   */
  docs?: boolean;
  /** Where failures are logged with their details (default: Fastify's pino logger at level warn). */
  logger?: FastifyBaseLogger;
  /** How long close() lets requests in flight finish before it cuts their connections (default 5 s). */
  closeGraceMs?: number;
}

export interface RestServer {
  /** Base URL, e.g. `http://127.0.0.1:39123`. */
  url: string;
  /** The OpenAPI 3.1 document served at /openapi.json. */
  openapi: object;
  /** Each query's time limit (504 past it). */
  timeoutMs: number;
  close(): Promise<void>;
}

export const OPENAPI_PATH = '/openapi.json';

const DEFAULT_MAX_IN_FLIGHT = 256;

export async function createRestServer(options: RestServerOptions): Promise<RestServer> {
  const maxStringLength = options.maxStringLength ?? DEFAULT_MAX_STRING_LENGTH;
  const routes = checkedRoutes(options.databases);
  const openapi = restOpenApi(documentedEndpoints(routes), {
    title: options.title,
    version: options.version,
    maxStringLength,
  });

  const app: FastifyInstance = Fastify({
    ...(options.logger ? { loggerInstance: options.logger } : { logger: { level: 'warn' } }),
    // Failures are logged by the error handler; a line per request would drown them.
    logController: new LogController({ disableRequestLogging: true }),
    // Query text that is not valid (a malformed or non-UTF-8 escape) is refused, never read literally.
    routerOptions: { querystringParser: parseQuery },
    // Every refusal in our format, whoever makes it: Fastify before routing, Node's parser before Fastify.
    frameworkErrors: (error, _request, reply: FastifyReply) => {
      const response = frameworkError(error);
      void reply.status(response.status).send(response.body);
    },
    clientErrorHandler: (error, socket) => {
      const response = clientError(error);
      const text = JSON.stringify(response.body);
      if (socket.writable)
        socket.end(
          `HTTP/1.1 ${response.status} ${response.reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
            `Content-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
        );
      else socket.destroy();
    },
  });

  // Query strings are text: coerced to the declared types; unknown parameters refused, never dropped.
  useLazyValidators(app);
  app.setErrorHandler((error, request, reply) => {
    const response = toErrorResponse(error, options.timeoutMs);
    if (response.internal)
      request.log.error({ err: error, url: request.url, routeUrl: request.routeOptions.url }, 'REST request failed');
    return reply
      .status(response.status)
      .headers(response.headers ?? {})
      .send(response.body);
  });
  // A path the API serves, asked with another method: 405 and what it allows (HEAD is GET without its body),
  // decided before any body is read (a malformed or oversized one would otherwise answer 400 or 413).
  const served = new Set([OPENAPI_PATH, ...routes.map((route) => route.endpoint.path)]);
  app.addHook('onRequest', (request, reply, done) => {
    const path = request.url.split('?', 1)[0];
    if (request.method === 'GET' || request.method === 'HEAD' || !(served.has(path) || path.startsWith(DOCS_PREFIX)))
      return done();
    void reply.status(405).header('allow', ALLOWED_METHODS).send(methodNotAllowed(request.method));
  });
  app.setNotFoundHandler((_request, reply) => reply.status(404).send(notFound()));

  const document = JSON.stringify(openapi);
  app.get(OPENAPI_PATH, (_request, reply) => reply.type('application/json; charset=utf-8').send(document));
  if (options.docs ?? true) await registerDocs(app, openapi);

  const maxInFlight = options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT;
  let inFlight = 0;
  for (const { db, endpoint } of routes) {
    const serialize = compileSerializer(endpoint.response);
    app.get(
      endpoint.path,
      { schema: { querystring: querystringSchema(endpoint.parameters, { maxStringLength }) } },
      async (request, reply) => {
        if (inFlight >= maxInFlight) return reply.status(503).header('retry-after', RETRY_AFTER_S).send(saturated());
        inFlight++;
        try {
          const result = await runEndpoint(
            endpoint,
            request.query as Record<string, ArgumentValue>,
            db,
            options.executor,
            options.timeoutMs,
          );
          return reply.type('application/json; charset=utf-8').send(serialize(result.rows));
        } finally {
          inFlight--;
        }
      },
    );
  }

  try {
    await app.listen({ host: options.host ?? '127.0.0.1', port: options.port ?? 0 });
  } catch (error) {
    await app.close();
    throw error;
  }
  return {
    url: urlOf(app.server.address() as AddressInfo),
    openapi,
    timeoutMs: options.timeoutMs,
    close: () => closeWithin(app, options.closeGraceMs ?? CLOSE_GRACE_MS),
  };
}

const CLOSE_GRACE_MS = 5000;

/**
 * Fastify closes idle keep-alive connections at once but waits for any other, and a client
 * that stopped halfway through sending a request would hold it until Node's header
 * timeout (a minute): past the grace, every connection is cut.
 */
async function closeWithin(app: FastifyInstance, graceMs: number): Promise<void> {
  const cut = setTimeout(() => app.server.closeAllConnections(), graceMs);
  try {
    await app.close();
  } finally {
    clearTimeout(cut);
  }
}

interface Route {
  db: DatabaseInfo;
  endpoint: ServedEndpointSpec;
}

/**
 * Every endpoint valid against its schema, every placeholder declared, no two endpoints
 * with the same path, nor of one database with the same operationId: refused at startup,
 * not per request.
 */
function checkedRoutes(databases: readonly RestDatabase[]): Route[] {
  const paths = new Set<string>();
  return databases.flatMap(({ db, endpoints }) => {
    const operationIds = new Set<string>();
    return endpoints.map((candidate) => {
      const parsed = EndpointSpecSchema.safeParse(candidate);
      if (!parsed.success)
        throw new Error(`endpoint ${candidate.operationId} of ${db.dbId} is invalid: ${parsed.error.message}`);
      const endpoint = parsed.data;
      if (!isServed(endpoint))
        throw new Error(
          `endpoint ${endpoint.operationId} of ${db.dbId} declares no response fields (made by an older nl2api: run generate again)`,
        );
      if (paths.has(endpoint.path)) throw new Error(`two endpoints share the path ${endpoint.path}`);
      if (operationIds.has(endpoint.operationId))
        throw new Error(`two endpoints share the operationId ${endpoint.operationId}`);
      paths.add(endpoint.path);
      operationIds.add(endpoint.operationId);
      const declared = new Set(endpoint.parameters.map((param) => param.name));
      const problem = placeholderProblem(endpoint.sql, declared);
      if (problem) throw new Error(`endpoint ${endpoint.operationId} uses ${problem}`);
      return { db, endpoint };
    });
  });
}

/**
 * Operation ids are unique per database (they are the tools of one database's samples);
 * one document over several databases qualifies an id that several of them use with its
 * database (`<db>__<id>`), as OpenAPI wants ids unique in a document.
 */
function documentedEndpoints(routes: readonly Route[]): ServedEndpointSpec[] {
  const uses = new Map<string, number>();
  for (const { endpoint } of routes) uses.set(endpoint.operationId, (uses.get(endpoint.operationId) ?? 0) + 1);
  return routes.map(({ db, endpoint }) =>
    uses.get(endpoint.operationId)! > 1
      ? { ...endpoint, operationId: `${db.dbId}__${endpoint.operationId}` }
      : endpoint,
  );
}

/** `http://<host>:<port>` of a listening address (IPv6 bracketed). */
export function urlOf(address: AddressInfo): string {
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}
