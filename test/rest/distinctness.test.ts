import { distinctness, sumDistinctness } from '../../generators/rest/distinctness.js';
import type { EndpointSpec } from '../../runtime/rest/spec.js';

/** The check a database's endpoints face: can a model tell them apart? */

const endpoint = (operationId: string, summary: string, description: string, parameters: string[] = []) =>
  ({
    operationId,
    path: `/v1/d/db/${operationId}`,
    summary,
    description,
    parameters: parameters.map((text, i) => ({ name: `p${i}`, type: 'string', description: text, required: true })),
    sql: 'SELECT 1',
    response: { description: 'rows' },
  }) as unknown as EndpointSpec;

test('counts suffixed names, shared descriptions and summaries, and parameters described alike', () => {
  const figures = distinctness([
    endpoint('getCountIdByColour', 'Count heroes by colour', 'Counts heroes of a colour.', ['Colour']),
    endpoint('getCountIdByColour_2', 'Count heroes by colour', 'Counts heroes of a colour.', ['Colour']),
    endpoint('getNameByColour', 'Names by eye and hair colour', 'Names of heroes.', ['Colour', 'Colour']),
    endpoint('getTop_3', 'Top three', 'The three tallest heroes.'), // a number, not a variant: no getTop
  ]);
  expect(figures).toEqual({
    endpoints: 4,
    suffixedNames: 1,
    sharedDescriptions: 2,
    sharedSummaries: 2,
    ambiguousParameters: 1,
  });
  expect(sumDistinctness([figures, figures]).sharedDescriptions).toBe(4);
});

test('distinct endpoints count nothing', () => {
  expect(
    distinctness([
      endpoint('getEyeColourCount', 'Count by eye colour', 'Heroes with an eye colour.', ['Eye colour']),
      endpoint('getHairColourCount', 'Count by hair colour', 'Heroes with a hair colour.', ['Hair colour']),
    ]),
  ).toEqual({ endpoints: 2, suffixedNames: 0, sharedDescriptions: 0, sharedSummaries: 0, ambiguousParameters: 0 });
});
