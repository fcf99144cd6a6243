import { templateWriter } from '../../generators/chain/question-writer.js';
import path from 'node:path';
import { splitNested } from '../../generators/chain/nested.js';
import Database from 'better-sqlite3';
import { parseConfig } from '../../config/load.js';
import type { DatabaseInfo } from '../../core/model.js';
import { composeChains } from '../../pipeline/chain/chains.js';
import type { FirstHop } from '../../pipeline/chain/sample.js';
import { composeChain } from '../../generators/chain/compose.js';
import { endpointSites } from '../../generators/chain/endpoint-sites.js';
import { linkedColumns } from '../../generators/chain/links.js';
import { keyCandidates, provenKeys } from '../../generators/chain/proven-keys.js';
import { checkContext, checkLeaks, mentions, templateQuestion } from '../../generators/chain/question.js';
import { endpointCaller, runHopByHop, type ChainHopPlan } from '../../generators/chain/run.js';
import { transformOf } from '../../generators/chain/transforms.js';
import { ChainStates, runOnDatabase, verifyChain } from '../../pipeline/chain/verify.js';
import type { ServedEndpointSpec } from '../../runtime/rest/spec.js';
import { createDirectExecutor } from '../../runtime/sql/direct.js';
import { schoolsDb } from '../rest/fixtures.js';
import { tempDir } from '../sql/fixtures.js';

/** Endpoints over the schools fixture (test/rest/fixtures.ts), as REST's synthesis would serve them. */
function endpoint(
  operationId: string,
  sql: string,
  parameters: { name: string; type: 'string' | 'integer' | 'number' }[],
  fields: string[],
  shape: 'list' | 'object' | 'object_or_null' = 'list',
): ServedEndpointSpec {
  return {
    operationId,
    path: `/v1/test/schools/${operationId.toLowerCase()}`,
    summary: `Get ${operationId
      .replace(/^get/, '')
      .replace(/([A-Z])/g, ' $1')
      .trim()
      .toLowerCase()}`,
    description: 'test endpoint',
    parameters: parameters.map((p) => ({ ...p, description: p.name, required: true })),
    sql,
    response: {
      description: 'rows',
      shape,
      fields: fields.map((name) => ({
        name,
        description: name,
        types: ['string', 'integer', 'number'],
        nullable: true,
      })),
    },
  };
}

const countyOfSchool = endpoint(
  'getCountyIdBySchoolName',
  'SELECT county_id FROM school WHERE name = :school_name',
  [{ name: 'school_name', type: 'string' }],
  ['county_id'],
);
const countyName = endpoint(
  'getCountyNameById',
  'SELECT county_name FROM county WHERE id = :id',
  [{ name: 'id', type: 'integer' }],
  ['county_name'],
);
const schoolsOfCounty = endpoint(
  'getSchoolNamesByCountyName',
  'SELECT T1.name FROM school AS T1 JOIN county AS T2 ON T1.county_id = T2.id WHERE T2.county_name = :county_name',
  [{ name: 'county_name', type: 'string' }],
  ['name'],
);
const enrollmentOfSchool = endpoint(
  'getEnrollmentBySchoolName',
  'SELECT enrollment FROM school WHERE name = :name',
  [{ name: 'name', type: 'string' }],
  ['enrollment'],
);
const biggestSchools = endpoint(
  'getSchoolNamesByMinEnrollment',
  'SELECT name, enrollment FROM school WHERE enrollment > :min_enrollment ORDER BY enrollment DESC',
  [{ name: 'min_enrollment', type: 'integer' }],
  ['name', 'enrollment'],
);
const openedInYear = endpoint(
  'getSchoolNamesByOpenedYear',
  "SELECT name FROM school WHERE STRFTIME('%Y', opened) = :year",
  [{ name: 'year', type: 'string' }],
  ['name'],
);
const openingOfSchool = endpoint(
  'getOpenedBySchoolName',
  'SELECT opened FROM school WHERE name = :name',
  [{ name: 'name', type: 'string' }],
  ['opened'],
);
const ENDPOINTS = [
  countyOfSchool,
  countyName,
  schoolsOfCounty,
  enrollmentOfSchool,
  biggestSchools,
  openedInYear,
  openingOfSchool,
];

function context(db: DatabaseInfo, variants = 3) {
  const config = parseConfig({ verification: { variants, dir: path.join(tempDir('nl2api-chain-'), 'variants') } });
  return { config, db, executor: createDirectExecutor() };
}

describe('what an endpoint can connect', () => {
  it('reads the column each parameter is compared with and each field is, through joins and MIN/MAX', () => {
    const db = schoolsDb();
    const sites = endpointSites(schoolsOfCounty, ['name'], db);
    expect(sites.params.map((p) => [p.param.name, p.column, p.op])).toEqual([
      ['county_name', { table: 'county', column: 'county_name' }, '='],
    ]);
    expect(sites.fields).toEqual([{ index: 0, name: 'name', column: { table: 'school', column: 'name' } }]);
    const max = endpoint('getMax', 'SELECT MAX(enrollment), COUNT(*) FROM school', [], ['most', 'count']);
    expect(endpointSites(max, ['most', 'count'], db).fields.map((f) => f.column)).toEqual([
      { table: 'school', column: 'enrollment' },
    ]);
    const year = endpointSites(openedInYear, ['name'], db).params[0];
    expect([year.fn, year.fnFormat]).toEqual(['STRFTIME', '%Y']);
  });

  it('links a column to itself and to the columns foreign keys join it with, and nothing else', () => {
    const linked = linkedColumns(schoolsDb());
    expect(linked({ table: 'school', column: 'county_id' }, { table: 'COUNTY', column: 'ID' })).toBe(true);
    expect(linked({ table: 'school', column: 'name' }, { table: 'school', column: 'name' })).toBe(true);
    expect(linked({ table: 'school', column: 'id' }, { table: 'county', column: 'id' })).toBe(false);
  });
});

describe('transforms', () => {
  it('make exactly one value, the same in JavaScript as in SQL, or none', async () => {
    const db = schoolsDb();
    const connection = new Database(db.path, { readonly: true });
    const inSql = (kind: Parameters<typeof transformOf>[0], values: (string | number)[]) => {
      const rows = values.map((v) => `SELECT ${typeof v === 'string' ? `'${v}'` : v} AS x`).join(' UNION ALL ');
      const sql = `WITH t(c) AS (${rows}) ${transformOf(kind).sql('t', 'c')}`;
      return (connection.prepare(sql).raw().get() as unknown[])[0];
    };
    for (const [kind, values] of [
      ['max', [3, 10.5, -2]],
      ['min', [3, 10.5, -2]],
      ['alphabetical_first', ['pine', 'Oak', 'elm']],
      ['alphabetical_last', ['pine', 'Oak', 'elm']],
      ['year', ['2015-08-20']],
      ['month', ['2015-08-20']],
      ['value', ['only']],
    ] as const)
      expect(transformOf(kind).apply(values)).toEqual(inSql(kind, [...values]));
    connection.close();
    expect(transformOf('value').apply(['a', 'b'])).toBeUndefined();
    expect(transformOf('max').apply([1, 'b'])).toBeUndefined();
    expect(transformOf('alphabetical_first').apply(['é', 'e'])).toBeUndefined(); // orders differ past ASCII
    expect(transformOf('year').apply(['20/08/2015'])).toBeUndefined();
  });
});

describe('a chain', () => {
  it('composes into one statement that answers what the hops answer', async () => {
    const ctx = context(schoolsDb());
    const hops: ChainHopPlan[] = [
      { endpoint: countyOfSchool, args: { school_name: 'Oak High' } },
      { endpoint: countyName, args: {}, link: { param: 'id', fieldIndex: 0, transform: 'value' as const } },
      {
        endpoint: schoolsOfCounty,
        args: {},
        link: { param: 'county_name', fieldIndex: 0, transform: 'value' as const },
      },
    ];
    const run = await runHopByHop(hops, endpointCaller(ctx.db, ctx.executor, 1000));
    expect(run.ok && run.value.bridges).toEqual([1, 'Alameda']);
    expect(run.ok && run.value.answer).toEqual([['Oak High'], ['Pine Elementary']]);
    const composed = composeChain(hops.map((hop) => ({ ...hop, width: 1 })));
    expect(composed.args).toEqual({ h1_school_name: 'Oak High' });
    expect(composed.parameters.map((p) => p.name)).toEqual(['h1_school_name']);
    const verified = await verifyChain(hops, run.ok ? run.value : (undefined as never), new ChainStates(ctx));
    expect(verified.ok).toBe(true);
    if (verified.ok) {
      expect(verified.value.variants.map((v) => v.variant)).toEqual(['reordered', 'perturbed-1', 'perturbed-2']);
      // No hop's answer depends on row order: the reordered variant's answer is the database's, not run.
      expect(verified.value.variants[0]).toEqual({
        variant: 'reordered',
        answer: [['Oak High'], ['Pine Elementary']],
        proven: true,
      });
    }
    await ctx.executor.close();
  });

  it('refuses a link that makes no single value, an empty answer, and a composed statement that fails', async () => {
    const ctx = context(schoolsDb());
    const ambiguous = await runOnDatabase(
      [
        { endpoint: schoolsOfCounty, args: { county_name: 'Alameda' } },
        { endpoint: enrollmentOfSchool, args: {}, link: { param: 'name', fieldIndex: 0, transform: 'value' } },
      ],
      new ChainStates(ctx),
    );
    expect(!ambiguous.ok && ambiguous.category).toBe('bridge_ambiguous');
    const empty = await runOnDatabase(
      [
        { endpoint: countyOfSchool, args: { school_name: 'No Such School' } },
        { endpoint: countyName, args: {}, link: { param: 'id', fieldIndex: 0, transform: 'value' } },
      ],
      new ChainStates(ctx),
    );
    expect(!empty.ok && empty.category).toBe('bridge_empty');
    // A single row is `value`'s: a list's transform is not chosen for it.
    const trivial = await runOnDatabase(
      [
        { endpoint: countyOfSchool, args: { school_name: 'Oak High' } },
        { endpoint: countyName, args: {}, link: { param: 'id', fieldIndex: 0, transform: 'max' } },
      ],
      new ChainStates(ctx),
    );
    expect(!trivial.ok && trivial.category).toBe('bridge_ambiguous');
    const broken = endpoint(
      'getBroken',
      'SELECT nope FROM county WHERE id = :id',
      [{ name: 'id', type: 'integer' }],
      ['x'],
    );
    const failed = await runOnDatabase(
      [
        { endpoint: countyOfSchool, args: { school_name: 'Oak High' } },
        { endpoint: broken, args: {}, link: { param: 'id', fieldIndex: 0, transform: 'value' } },
      ],
      new ChainStates(ctx),
    );
    expect(!failed.ok && failed.category).toBe('hop_failed');
    await ctx.executor.close();
  });

  it('refuses an answer that depends on the order rows are read in', async () => {
    const ctx = context(schoolsDb(), 1);
    const anyCounty = endpoint('getAnyCountyId', 'SELECT id FROM county LIMIT 1', [], ['id'], 'object_or_null');
    const hops: ChainHopPlan[] = [
      { endpoint: anyCounty, args: {} },
      { endpoint: countyName, args: {}, link: { param: 'id', fieldIndex: 0, transform: 'value' as const } },
    ];
    const run = await runOnDatabase(hops, new ChainStates(ctx));
    expect(run.ok).toBe(true);
    const verified = await verifyChain(hops, run.ok ? run.value : (undefined as never), new ChainStates(ctx));
    expect(!verified.ok && verified.category).toBe('nondeterministic');
    await ctx.executor.close();
  });
});

describe('questions', () => {
  it('merge the first question with what each later hop takes, deterministically', () => {
    const { question, components } = templateQuestion('Which county is Oak High in?', [
      { endpoint: countyOfSchool },
      { endpoint: countyName, link: { field: 'county_id', param: 'id', transform: 'value' } },
    ]);
    expect(question).toBe(
      'Which county is Oak High in? Then take the county id it gives and use it as the id to get county name by id.',
    );
    expect(components).toEqual(['Which county is Oak High in?', countyName.summary]);
  });

  it('leak no bridge and no answer value, and name every first-hop value', () => {
    expect(mentions('schools opened in 2015', 15)).toBe(true);
    expect(mentions('schools opened in 2015', null)).toBe(false);
    expect(checkLeaks('Which county is Oak High in?', ['Alameda'], [['x']]).ok).toBe(true);
    expect(checkLeaks('Which schools are in Alameda?', ['Alameda'], []).ok).toBe(false);
    const leak = checkLeaks('How many schools opened in 2015?', [], [[2015]]);
    expect(!leak.ok && leak.category).toBe('leaks_answer');
    expect(checkContext('Schools of Oak High', '', { school_name: 'oak high' }).ok).toBe(true);
    expect(checkContext('Schools of it', "Oak High refers to name = 'Oak High'", { school_name: 'Oak High' }).ok).toBe(
      true,
    );
    const missing = checkContext('Which county?', '', { school_name: 'Oak High' });
    expect(!missing.ok && missing.category).toBe('insufficient_context');
  });
});

describe("composing a database's chains", () => {
  it('keeps verified chains of 2 and 3 hops with several transforms, and says why each first hop gave none', async () => {
    const ctx = context(schoolsDb());
    const firsts: FirstHop[] = [
      {
        id: '1',
        question: 'Which county is Oak High in?',
        evidence: '',
        endpoint: countyOfSchool,
        args: { school_name: 'Oak High' },
      },
      {
        id: '2',
        question: 'Which schools have more than 100 students, biggest first?',
        evidence: '',
        endpoint: biggestSchools,
        args: { min_enrollment: 100 },
      },
      {
        id: '3',
        question: 'When did Cedar Middle open?',
        evidence: '',
        endpoint: openingOfSchool,
        args: { name: 'Cedar Middle' },
      },
      {
        id: '4',
        question: 'Which county?',
        evidence: '',
        endpoint: countyOfSchool,
        args: { school_name: 'Elm Academy' },
      },
    ];
    const run = await composeChains(firsts, ENDPOINTS, [], ctx, {
      attempts: 6,
      perFirst: 2,
      concurrency: 4,
      writer: templateWriter,
      datasetName: 'demo',
    });
    const lengths = new Set(run.samples.map((s) => s.hops.length));
    expect(lengths).toEqual(new Set([2, 3]));
    const transforms = new Set(run.samples.flatMap((s) => s.hops.slice(1).map((h) => h.link!.transform)));
    expect(transforms.size).toBeGreaterThanOrEqual(3);
    for (const sample of run.samples) {
      expect(checkLeaks(sample.question, sample.bridges, sample.verified.run.answer).ok).toBe(true);
      // The sample's recorded answer is its composed statement's, run independently.
      const connection = new Database(ctx.db.path, { readonly: true });
      const named = Object.fromEntries(Object.entries(sample.verified.composed.args).map(([k, v]) => [k, v]));
      const rows = connection.prepare(sample.verified.composed.sql).raw().all(named);
      connection.close();
      expect(new Set(rows.map((r) => JSON.stringify(r)))).toEqual(
        new Set(sample.verified.run.answer.map((r) => JSON.stringify(r))),
      );
    }
    // The 4th names no value of its first hop in its question: no chain, and why.
    expect(run.without.filter((w) => w.firstId === '4').map((w) => w.category)).toEqual([
      'question:insufficient_context',
      'question:insufficient_context',
    ]);
    // Same inputs, same chains.
    const again = await composeChains(firsts, ENDPOINTS, [], ctx, {
      attempts: 6,
      perFirst: 2,
      concurrency: 1,
      writer: templateWriter,
      datasetName: 'demo',
    });
    expect(again.samples.map((s) => s.id)).toEqual(run.samples.map((s) => s.id));
    await ctx.executor.close();
  });
});

describe('gold SQL that nests: the subquery hop 1, the statement around it hop 2 (generators/chain/nested.ts)', () => {
  test('= (SELECT …) and IN (SELECT …) split; the value written in where the subquery was', () => {
    const eq = splitNested("SELECT title FROM book WHERE price = ( SELECT MAX(price) FROM book WHERE note = 'a (b)' )");
    expect(eq?.inner).toBe("SELECT MAX(price) FROM book WHERE note = 'a (b)'");
    expect(eq?.outer(12.5)).toBe('SELECT title FROM book WHERE price = 12.5');
    const inList = splitNested(
      "SELECT name FROM member WHERE id IN (SELECT owner FROM bike WHERE kind = 'Mountain') AND x = 1",
    );
    expect(inList?.inner).toBe("SELECT owner FROM bike WHERE kind = 'Mountain'");
    expect(inList?.outer("O'Brien")).toBe("SELECT name FROM member WHERE id IN ('O''Brien') AND x = 1");
  });

  test('no split: NOT IN, another comparison, EXISTS, a subquery in FROM, none at all', () => {
    for (const sql of [
      'SELECT a FROM t WHERE b NOT IN (SELECT c FROM u)',
      'SELECT a FROM t WHERE b > (SELECT AVG(c) FROM u)',
      'SELECT a FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.c = t.b)',
      'SELECT a FROM (SELECT a FROM t) AS s',
      "SELECT a FROM t WHERE b = '(SELECT 1)'",
    ])
      expect(splitNested(sql)).toBeUndefined();
  });
});

describe('foreign keys the data proves (generators/chain/proven-keys.ts)', () => {
  /** The schools fixture without its declared key school.county_id → county.id. */
  const undeclared = () => {
    const db = schoolsDb();
    return { ...db, tables: db.tables.map((t) => ({ ...t, foreignKeys: [] })) };
  };

  test('a column named as another table’s key, all of whose values are that key’s, links as a declared key does', async () => {
    const db = undeclared();
    const school = { table: 'school', column: 'county_id' };
    const county = { table: 'county', column: 'id' };
    expect(linkedColumns(db)(school, county)).toBe(false);
    expect(keyCandidates(db)).toEqual([{ table: 'school', column: 'county_id', refTable: 'county', refColumn: 'id' }]);
    // Declared: nothing left to prove.
    expect(keyCandidates(schoolsDb())).toEqual([]);
    const executor = createDirectExecutor();
    try {
      const proven = await provenKeys(db, executor, 5_000);
      expect(proven).toEqual(keyCandidates(db));
      expect(linkedColumns(db, proven)(school, county)).toBe(true);
    } finally {
      await executor.close();
    }
  });

  test('one value that is not a key’s value disproves it', async () => {
    const db = undeclared();
    const sqlite = new Database(db.path);
    // The file declares the key: SQLite would refuse the orphan value.
    sqlite.pragma('foreign_keys = OFF');
    sqlite.prepare('UPDATE school SET county_id = 999 WHERE id = (SELECT MIN(id) FROM school)').run();
    sqlite.close();
    const executor = createDirectExecutor();
    try {
      expect(await provenKeys(db, executor, 5_000)).toEqual([]);
    } finally {
      await executor.close();
    }
  });
});
