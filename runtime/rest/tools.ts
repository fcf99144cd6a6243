import type { EndpointSpec } from './spec.js';
import type { ToolSpec } from '../../core/model.js';
import { DEFAULT_MAX_STRING_LENGTH, parameterSchema } from './parameters.js';

/**
 * REST endpoints as an OpenAI-format tool list: one function per endpoint, named by its
 * operationId, its arguments the query parameters with the schemas the server validates.
 * (The path is not part of a function spec; a sample's call carries it.)
 */
export function restToolSpecs(
  endpoints: readonly EndpointSpec[],
  maxStringLength = DEFAULT_MAX_STRING_LENGTH,
): ToolSpec[] {
  return endpoints.map((endpoint) => ({
    type: 'function',
    function: {
      name: endpoint.operationId,
      description: endpoint.description ? `${endpoint.summary}. ${endpoint.description}` : endpoint.summary,
      parameters: {
        type: 'object',
        properties: Object.fromEntries(
          endpoint.parameters.map((param) => [
            param.name,
            { ...parameterSchema(param, { maxStringLength }), description: param.description },
          ]),
        ),
        required: endpoint.parameters.filter((param) => param.required).map((param) => param.name),
        additionalProperties: false,
      },
    },
  }));
}
