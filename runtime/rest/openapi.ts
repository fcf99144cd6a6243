import type { EndpointSpec, ServedEndpointSpec } from './spec.js';
import { bodySchema, objectSchema } from './response.js';
import { DEFAULT_MAX_STRING_LENGTH, parameterSchema } from './parameters.js';

/**
 * The OpenAPI 3.1 document of a set of REST endpoints: one GET operation per endpoint,
 * its query parameters described as the server validates them, its response as the server
 * sends it (response.ts: one object, one object or null, or a list, of its own fields). Pure: the live server
 * publishes it and emit writes it next to the datasets.
 */

export interface RestApiInfo {
  title: string;
  version: string;
  /** Longest accepted string parameter (default DEFAULT_MAX_STRING_LENGTH). */
  maxStringLength?: number;
}

const ERROR_SCHEMA = {
  type: 'object',
  properties: {
    error: {
      type: 'object',
      properties: { code: { type: 'string' }, message: { type: 'string' } },
      required: ['code', 'message'],
      additionalProperties: false,
    },
  },
  required: ['error'],
  additionalProperties: false,
};

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

/** `/v1/<dataset>/<db>/<slug>`: operations are grouped by database in the docs. */
function tagOf(endpoint: EndpointSpec): string {
  return endpoint.path.split('/')[3] ?? 'default';
}

export function restOpenApi(endpoints: readonly ServedEndpointSpec[], info: RestApiInfo): Record<string, unknown> {
  const limits = { maxStringLength: info.maxStringLength ?? DEFAULT_MAX_STRING_LENGTH };
  const paths: Record<string, unknown> = {};
  const tags = new Set<string>();
  const schemas: Record<string, unknown> = { Error: ERROR_SCHEMA };
  for (const endpoint of endpoints) {
    // Each endpoint's object schema is a named component: client generators make a type of it.
    const objectName = `${endpoint.operationId}_result`;
    schemas[objectName] = objectSchema(endpoint.response.fields);
    const tag = tagOf(endpoint);
    tags.add(tag);
    paths[endpoint.path] = {
      get: {
        operationId: endpoint.operationId,
        summary: endpoint.summary,
        ...(endpoint.description ? { description: endpoint.description } : {}),
        tags: [tag],
        parameters: endpoint.parameters.map((param) => ({
          name: param.name,
          in: 'query',
          description: param.description,
          required: param.required,
          schema: parameterSchema(param, limits),
          ...(param.example !== undefined ? { example: param.example } : {}),
        })),
        responses: {
          '200': {
            description: endpoint.response.description,
            content: {
              'application/json': {
                schema: bodySchema(endpoint.response, { $ref: `#/components/schemas/${objectName}` }),
              },
            },
          },
          '400': errorResponse('Invalid parameters: missing, unknown, of the wrong type or too long.'),
          '500': errorResponse('The query failed.'),
          '504': errorResponse('The query ran past the time limit and was stopped.'),
        },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: info.title, version: info.version },
    tags: [...tags].sort().map((name) => ({ name })),
    paths,
    components: { schemas },
  };
}
