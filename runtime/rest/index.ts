/** The REST formulation's live server (issue 3): endpoint specs served over HTTP with an OpenAPI document. */
export {
  createRestServer,
  OPENAPI_PATH,
  type RestDatabase,
  type RestServer,
  type RestServerOptions,
} from './server.js';
export { restOpenApi, type RestApiInfo } from './openapi.js';
export { DEFAULT_MAX_STRING_LENGTH } from './parameters.js';
