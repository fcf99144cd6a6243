import type swaggerUiPlugin from '@fastify/swagger-ui';
import type { FastifyInstance, FastifyPluginCallback } from 'fastify';

/**
 * Interactive docs at `/docs` for a ready-made OpenAPI document. @fastify/swagger-ui reads
 * the document from `app.swagger()`, normally provided by @fastify/swagger, which would
 * generate its own document from the routes; ours is built by restOpenApi (the one emit
 * writes), so a minimal stand-in plugin under that name provides it instead.
 */

export const DOCS_PREFIX = '/docs';

/**
 * Loaded when docs are served, with Node's own require, taken from the built-in module itself: its dependency
 * @fastify/static requires an ESM-only package (content-disposition 3), which Node's
 * require accepts (Node >= 20.19) but jest's module registry (which also stands in for an
 * imported `node:module`) does not, and the server must load under jest for in-process tests.
 */
function swaggerUi(): typeof swaggerUiPlugin {
  const nativeRequire = process.getBuiltinModule('node:module').createRequire(import.meta.url);
  return nativeRequire('@fastify/swagger-ui') as typeof swaggerUiPlugin;
}

function documentProvider(document: object): FastifyPluginCallback {
  // JSON is valid YAML: the UI's /yaml route gets the same document.
  const yaml = JSON.stringify(document, null, 2);
  const plugin: FastifyPluginCallback = (app, _options, done) => {
    app.decorate('swagger', (options?: { yaml?: boolean }) => (options?.yaml ? yaml : document));
    done();
  };
  // What fastify-plugin would set: no encapsulation, and the name swagger-ui depends on.
  return Object.assign(plugin, {
    [Symbol.for('skip-override')]: true,
    [Symbol.for('fastify.display-name')]: '@fastify/swagger',
    [Symbol.for('plugin-meta')]: { name: '@fastify/swagger', fastify: '5.x' },
  });
}

export async function registerDocs(app: FastifyInstance, document: object): Promise<void> {
  await app.register(documentProvider(document));
  await app.register(swaggerUi(), { routePrefix: DOCS_PREFIX });
}
