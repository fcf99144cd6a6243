import { describe, expect, test } from '@jest/globals';
import { Validator } from '@cfworker/json-schema';
import type { SqlValue } from '../../core/model.js';
import { bodySchema, compileSerializer, objectSchema, responseBody, rowsOfBody } from '../../runtime/rest/response.js';
import type { ResponseShape, ResponseSpec } from '../../runtime/rest/spec.js';

/** One rule, three views: the text the server sends, the same as JSON, and its JSON schema. */

const spec = (shape: ResponseShape): ResponseSpec => ({
  description: 'test',
  shape,
  fields: [
    { name: 'school_name', description: 'name', types: ['string'], nullable: true },
    { name: 'enrollment', description: 'students', types: ['integer'], nullable: false },
    { name: 'rate', description: 'rate', types: ['number'], nullable: true },
  ],
});

const ROWS: SqlValue[][] = [
  ['Oak "High"\n', 1200, 0.42],
  ['Pine \u2028 \\ </script>', 300, null],
  [null, -0, 1e-7],
];

const validate = (response: ResponseSpec, body: unknown) =>
  new Validator(bodySchema(response, objectSchema(response.fields)), '2020-12').validate(body);

describe.each(['list', 'object', 'object_or_null'] as const)('%s', (shape) => {
  const response = spec(shape);
  const rows = shape === 'list' ? ROWS : ROWS.slice(0, 1);

  test('the serialized text parses to the JSON body, which its schema accepts and which maps back to the rows', () => {
    const text = compileSerializer(response)(rows);
    const body: unknown = JSON.parse(text);
    expect(body).toEqual(responseBody(response, rows));
    expect(validate(response, body).valid).toBe(true);
    expect(rowsOfBody(response, body)).toEqual(rows.map((row) => row.map((v) => (Object.is(v, -0) ? 0 : v))));
  });

  test('field order is column order', () => {
    expect(Object.keys(responseBody(response, rows) as object[] | object)).toEqual(
      shape === 'list' ? ['0', '1', '2'] : ['school_name', 'enrollment', 'rate'],
    );
  });
});

test('no rows: an empty list, or null', () => {
  expect(compileSerializer(spec('list'))([])).toBe('[]');
  expect(compileSerializer(spec('object_or_null'))([])).toBe('null');
  expect(rowsOfBody(spec('object_or_null'), null)).toEqual([]);
  expect(rowsOfBody(spec('object'), null)).toBeNull();
  expect(validate(spec('object'), null).valid).toBe(false);
  expect(validate(spec('object_or_null'), null).valid).toBe(true);
});

test('values outside the declared types still serialize as valid JSON (the data drifted, the answer stays right)', () => {
  const drifted: SqlValue[][] = [[42, 'not a number', Infinity]];
  const text = compileSerializer(spec('list'))(drifted);
  expect(JSON.parse(text)).toEqual([{ school_name: 42, enrollment: 'not a number', rate: null }]);
  // …which the schema, made from the declared types, reports.
  expect(validate(spec('list'), JSON.parse(text)).valid).toBe(false);
});

test('a body of another shape or with other fields does not map back', () => {
  const response = spec('list');
  expect(rowsOfBody(response, { school_name: 'a', enrollment: 1, rate: 1 })).toBeNull();
  expect(rowsOfBody(response, [{ school_name: 'a', enrollment: 1 }])).toBeNull();
  expect(rowsOfBody(response, [{ school_name: 'a', enrollment: 1, rate: 1, extra: 2 }])).toBeNull();
  expect(rowsOfBody(response, [{ school_name: 'a', enrollment: [1], rate: 1 }])).toBeNull();
  expect(rowsOfBody(spec('object'), [{ school_name: 'a', enrollment: 1, rate: 1 }])).toBeNull();
});

test('a one-object shape given several rows is a bug, not a silent loss', () => {
  expect(() => compileSerializer(spec('object'))(ROWS)).toThrow(/3 rows/);
});

test('nullable fields admit null in the schema; a number field admits integers', () => {
  expect(objectSchema(spec('list').fields)).toMatchObject({
    properties: {
      school_name: { type: ['string', 'null'] },
      enrollment: { type: 'integer' },
      rate: { type: ['number', 'null'] },
    },
    required: ['school_name', 'enrollment', 'rate'],
    additionalProperties: false,
  });
});
