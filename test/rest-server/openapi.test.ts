import SwaggerParser from '@apidevtools/swagger-parser';
import { restOpenApi } from '../../runtime/rest/openapi.js';
import { HEROES_BY_PUBLISHER, HEROES_ENDPOINTS, NUMBERS, TALLER_THAN } from './fixtures.js';

/** The REST OpenAPI document passes a real OpenAPI 3.1 validator and describes what the server enforces. */

const endpoints = [...HEROES_ENDPOINTS, NUMBERS];

test('is valid OpenAPI 3.1 with one GET operation per endpoint', async () => {
  const doc = restOpenApi(endpoints, { title: 'heroes', version: '1' });
  const api = (await SwaggerParser.validate(structuredClone(doc) as never)) as {
    openapi: string;
    paths: Record<string, Record<string, unknown>>;
  };
  expect(api.openapi).toBe('3.1.0');
  expect(Object.keys(api.paths).sort()).toEqual(endpoints.map((e) => e.path).sort());
  for (const item of Object.values(api.paths)) expect(Object.keys(item)).toEqual(['get']);
});

test('operations carry ids, texts, typed parameters with examples and limits, and responses', () => {
  const doc = restOpenApi([HEROES_BY_PUBLISHER, TALLER_THAN], {
    title: 'heroes',
    version: '2',
    maxStringLength: 50,
  }) as any;
  expect(doc.info).toEqual({ title: 'heroes', version: '2' });
  expect(doc.tags).toEqual([{ name: 'heroes' }]);
  const get = doc.paths[HEROES_BY_PUBLISHER.path].get;
  expect(get).toMatchObject({
    operationId: 'getHeroesByPublisher',
    summary: HEROES_BY_PUBLISHER.summary,
    description: HEROES_BY_PUBLISHER.description,
    tags: ['heroes'],
  });
  expect(get.parameters).toEqual([
    {
      name: 'publisher',
      in: 'query',
      description: 'The publisher.',
      required: true,
      schema: { type: 'string', maxLength: 50 },
      example: 'DC',
    },
  ]);
  expect(Object.keys(get.responses)).toEqual(['200', '400', '500', '504']);
  expect(get.responses['200'].description).toBe(HEROES_BY_PUBLISHER.response.description);
  const taller = doc.paths[TALLER_THAN.path].get.parameters;
  expect(taller.map((param: any) => [param.name, param.required, param.schema.type])).toEqual([
    ['min_height', true, 'number'],
    ['limit', false, 'integer'],
  ]);
});

test('is deterministic', () => {
  expect(JSON.stringify(restOpenApi(endpoints, { title: 't', version: '1' }))).toBe(
    JSON.stringify(restOpenApi(endpoints, { title: 't', version: '1' })),
  );
});
