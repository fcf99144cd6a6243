import { distinctness, indistinctEndpoints, sumDistinctness } from '../../generators/rest/distinctness.js';
import type { EndpointSpec } from '../../runtime/rest/spec.js';
import { restCallStage, type RestCallContext, type RestCallInput } from '../../pipeline/stages/rest-call.js';

/** The check a database's endpoints face: can a model tell them apart? */

const endpoint = (
  operationId: string,
  summary: string,
  description: string,
  parameters: string[] = [],
  sql = 'SELECT 1',
) =>
  ({
    operationId,
    path: `/v1/d/db/${operationId}`,
    summary,
    description,
    parameters: parameters.map((text, i) => ({ name: `p${i}`, type: 'string', description: text, required: true })),
    sql,
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

describe('the gate (indistinctEndpoints)', () => {
  test('refuses each later endpoint a caller could not tell from an earlier one, saying which and why', () => {
    const found = indistinctEndpoints([
      endpoint('getElementByBondType', 'Elements by bond type', 'Via atoms.', ['Bond type'], 'SELECT a'),
      endpoint('getElementByBondType_2', 'Elements of a bond type', 'Via bonds.', ['Bond type'], 'SELECT b'),
      endpoint('getAtomsByBond', 'Elements by bond type', 'Via atoms.', ['Bond'], 'SELECT c'),
      endpoint('getAtomsByKind', 'Elements by bond type', 'Via connected atoms.', ['Bond type'], 'SELECT d'),
    ]);
    expect([...found]).toEqual([
      ['getElementByBondType_2', 'getElementByBondType_2 is named like getElementByBondType plus a number'],
      ['getAtomsByBond', 'getAtomsByBond has the summary and description of getElementByBondType, over other SQL'],
      ['getAtomsByKind', 'getAtomsByKind has the summary and parameters of getElementByBondType, over other SQL'],
    ]);
  });

  test('passes endpoints whose summaries differ, and a numbered name without its unnumbered twin', () => {
    expect(
      indistinctEndpoints([
        endpoint('getCountByCounty', 'Number of schools by county', 'Counts.', ['County'], 'SELECT 1'),
        endpoint('getAverageByCounty', 'Average enrollment by county', 'Averages.', ['County'], 'SELECT 2'),
        endpoint('getTop_3', 'Top three', 'The three largest.'),
      ]).size,
    ).toBe(0);
  });
});

test("an instance whose endpoint the gate refused is rejected as format:indistinct, with the gate's reason, before any call", async () => {
  const spec = endpoint('getAtomsByKind', 'Elements by bond type', 'Via connected atoms.');
  const input = {
    endpoint: { spec, call: { name: spec.operationId, path: spec.path, arguments: {} } },
    indistinct: 'getAtomsByKind has the summary and parameters of getElementByBondType, over other SQL',
  } as RestCallInput;
  // No server, no executor: the gate decides before anything runs.
  const outcome = await restCallStage.run(input, {} as RestCallContext);
  expect(outcome).toEqual({
    ok: false,
    category: 'format:indistinct',
    message: 'getAtomsByKind has the summary and parameters of getElementByBondType, over other SQL',
  });
});
