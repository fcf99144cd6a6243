/**
 * Builds the demo dataset's databases in BIRD layout (deterministic: a seeded PRNG, fixed
 * insertion order): `dev_databases/<db>/<db>.sqlite`, `dev_databases/<db>/database_description/
 * <table>.csv` and `dev_tables.json`. The questions (`dev.json`) are written by hand.
 *
 *   npx tsx seeds/demo/build.ts [outDir]      (default: next to this script)
 */
import { makeDirectory } from '../../core/directories.js';
import { rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { mulberry32 } from '../../core/random.js';
import { DATABASES, type DatabaseDef, type TableDef } from './schema.js';

type Row = (number | string | null)[];
type Rows = Record<string, Row[]>;

// ---------------------------------------------------------------- deterministic randomness

/** Seeded: the same demo rows on every platform. */
function prng(seed: number) {
  const next = mulberry32(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)];
  const chance = (p: number) => next() < p;
  const money = (lo: number, hi: number) => Math.round((lo + next() * (hi - lo)) * 100) / 100;
  /** A 'YYYY-MM-DD' date between two dates (inclusive). */
  const date = (from: string, to: string) => {
    const a0 = Date.parse(`${from}T00:00:00Z`);
    const days = Math.round((Date.parse(`${to}T00:00:00Z`) - a0) / 86_400_000);
    return new Date(a0 + int(0, days) * 86_400_000).toISOString().slice(0, 10);
  };
  return { next, int, pick, chance, money, date };
}
type Rng = ReturnType<typeof prng>;

const FIRST_NAMES = [
  'Alice',
  'Bruno',
  'Chloe',
  'Daniel',
  'Elena',
  'Farid',
  'Grace',
  'Hugo',
  'Ingrid',
  'Jonas',
  'Keiko',
  'Liam',
  'Maya',
  'Nadia',
  'Oscar',
  'Priya',
  'Quentin',
  'Rosa',
  'Samuel',
  'Tara',
  'Umar',
  'Vera',
  'William',
  'Yara',
  'Zoe',
];
const LAST_NAMES = [
  'Anderson',
  'Becker',
  'Carvalho',
  'Dubois',
  'Eriksen',
  'Fischer',
  'Garcia',
  'Hoffmann',
  'Ivanova',
  'Jensen',
  'Kowalski',
  'Lambert',
  'Moreau',
  'Nakamura',
  'Olsen',
  'Petrov',
  'Quinn',
  'Rossi',
  'Schmidt',
  'Turner',
  'Uddin',
  'Varga',
  'Walsh',
  'Young',
  'Zimmer',
];
const FEMALE = new Set([
  'Alice',
  'Chloe',
  'Elena',
  'Grace',
  'Ingrid',
  'Keiko',
  'Maya',
  'Nadia',
  'Priya',
  'Rosa',
  'Tara',
  'Vera',
  'Yara',
  'Zoe',
]);
const CITIES = ['London', 'Paris', 'Berlin', 'Madrid', 'Dublin', 'Lyon', 'Munich', 'Seville', 'Manchester', 'Hamburg'];

function person(rng: Rng, used: Set<string>): [string, string] {
  for (;;) {
    const name: [string, string] = [rng.pick(FIRST_NAMES), rng.pick(LAST_NAMES)];
    if (!used.has(name.join(' '))) {
      used.add(name.join(' '));
      return name;
    }
  }
}

function email(first: string, last: string, id: number, domain: string): string {
  return `${first}.${last}${id}@${domain}`.toLowerCase();
}

// ---------------------------------------------------------------- bookstore rows

const TITLE_ADJECTIVES = [
  'Silent',
  'Hidden',
  'Last',
  'Golden',
  'Broken',
  'Winter',
  'Crimson',
  'Forgotten',
  'Secret',
  'Distant',
];
const TITLE_NOUNS = [
  'River',
  'Garden',
  'Empire',
  'Letters',
  'Harbour',
  'Machine',
  'Island',
  'Kingdom',
  'Orchard',
  'Station',
];
const GENRES = ['Fiction', 'Mystery', 'Science Fiction', 'Biography', 'History', 'Poetry', 'Children'];

function bookTitle(rng: Rng, used: Set<string>): string {
  for (;;) {
    const adjective = rng.pick(TITLE_ADJECTIVES);
    const noun = rng.pick(TITLE_NOUNS);
    const title = rng.pick([
      `The ${adjective} ${noun}`,
      `${adjective} ${noun}`,
      `A History of the ${noun}`,
      `Letters from the ${adjective} ${noun}`,
      `The ${noun} of ${rng.pick(CITIES)}`,
    ]);
    if (!used.has(title)) {
      used.add(title);
      return title;
    }
  }
}

function bookstoreRows(rng: Rng): Rows {
  const publisher: Row[] = [
    ['Penguin Random House', 'New York', 'USA', 2013],
    ['HarperCollins', 'New York', 'USA', 1989],
    ['Gallimard', 'Paris', 'France', 1911],
    ['Suhrkamp', 'Berlin', 'Germany', 1950],
    ['Anagrama', 'Barcelona', 'Spain', 1969],
    ['Faber & Faber', 'London', 'United Kingdom', 1929],
    ['Bloomsbury', 'London', 'United Kingdom', 1986],
    ['Actes Sud', 'Arles', 'France', 1978],
    ['Hanser', 'Munich', 'Germany', 1928],
    ['Tor Books', 'New York', 'USA', 1980],
    ['Canongate', 'Edinburgh', 'United Kingdom', 1973],
    ['Small Lantern Press', 'Dublin', 'Ireland', 2016],
  ].map((r, i) => [i + 1, ...r]);

  const nationalities = ['British', 'French', 'German', 'Spanish', 'American', 'Irish', 'Japanese', 'Italian'];
  const names = new Set<string>();
  const author: Row[] = [];
  for (let id = 1; id <= 60; id++) {
    const [first, last] = person(rng, names);
    author.push([id, first, last, rng.chance(0.15) ? null : rng.int(1935, 1995), rng.pick(nationalities)]);
  }

  const languageOf: Record<string, string> = { France: 'French', Germany: 'German', Spain: 'Spanish' };
  const titles = new Set<string>();
  const book: Row[] = [];
  for (let id = 1; id <= 220; id++) {
    const publisherRow = publisher[rng.int(0, publisher.length - 1)];
    const genre = rng.pick(GENRES);
    const pages = genre === 'Poetry' ? rng.int(60, 180) : genre === 'Children' ? rng.int(24, 120) : rng.int(150, 720);
    const language = languageOf[publisherRow[3] as string] ?? (rng.chance(0.1) ? 'French' : 'English');
    book.push([
      id,
      bookTitle(rng, titles),
      rng.int(1, author.length),
      publisherRow[0],
      genre,
      rng.date('1995-01-01', '2023-12-31'),
      rng.money(genre === 'Children' ? 5 : 8, genre === 'History' ? 45 : 30),
      rng.chance(0.1) ? null : pages,
      language,
    ]);
  }

  const customerNames = new Set<string>();
  const customer: Row[] = [];
  for (let id = 1; id <= 150; id++) {
    const [first, last] = person(rng, customerNames);
    customer.push([
      id,
      first,
      last,
      rng.chance(0.2) ? null : email(first, last, id, rng.pick(['example.com', 'mail.example.org'])),
      rng.pick(CITIES),
      rng.date('2018-01-01', '2023-06-30'),
      rng.chance(0.35) ? null : rng.pick(['Gold', 'Silver', 'Silver', 'Bronze', 'Bronze', 'Bronze']),
    ]);
  }

  const statuses = ['Delivered', 'Delivered', 'Delivered', 'Delivered', 'Shipped', 'Cancelled', 'Returned'];
  const bookOrder: Row[] = [];
  for (let id = 1; id <= 450; id++) {
    const c = customer[rng.int(0, customer.length - 1)];
    const b = book[rng.int(0, book.length - 1)];
    // An order is placed after both the signup and the publication.
    const from = [c[5] as string, b[5] as string, '2019-01-01'].sort().at(-1)!;
    bookOrder.push([
      id,
      c[0],
      b[0],
      rng.date(from, '2024-06-30'),
      rng.chance(0.75) ? 1 : rng.int(2, 5),
      rng.chance(0.6) ? null : rng.pick([5, 10, 10, 15, 20, 25]),
      rng.pick(statuses),
    ]);
  }
  return { publisher, author, book, customer, book_order: bookOrder };
}

// ---------------------------------------------------------------- cycling club rows

const BIKES: Record<string, [string, string][]> = {
  Road: [
    ['Trek', 'Emonda'],
    ['Specialized', 'Tarmac'],
    ['Canyon', 'Ultimate'],
    ['Giant', 'TCR'],
    ['Cannondale', 'SuperSix'],
  ],
  Gravel: [
    ['Canyon', 'Grizl'],
    ['Specialized', 'Diverge'],
    ['Cannondale', 'Topstone'],
    ['Giant', 'Revolt'],
  ],
  Mountain: [
    ['Trek', 'Fuel EX'],
    ['Santa Cruz', 'Hightower'],
    ['Giant', 'Trance'],
    ['Specialized', 'Stumpjumper'],
  ],
  Hybrid: [
    ['Trek', 'FX 3'],
    ['Giant', 'Escape'],
    ['Cannondale', 'Quick'],
  ],
};
const RIDE_PLACES = ['Hillside', 'Riverside', 'Coastal', 'Forest', 'Valley', 'Lakeside', 'Ridge', 'Old Mill'];
const RIDE_KINDS = ['Loop', 'Sportive', 'Social Spin', 'Hill Repeats', 'Gravel Grind', 'Century'];
const STARTS = ['Town Hall', 'Central Station', 'Harbour Cafe', 'North Gate', 'Bike Shed'];

function cyclingRows(rng: Rng): Rows {
  const names = new Set<string>();
  const member: Row[] = [];
  for (let id = 1; id <= 120; id++) {
    const [first, last] = person(rng, names);
    const junior = rng.chance(0.15);
    const birth = junior ? rng.date('2006-01-01', '2011-12-31') : rng.date('1955-01-01', '2000-12-31');
    member.push([
      id,
      first,
      last,
      FEMALE.has(first) ? 'F' : 'M',
      birth,
      rng.pick(CITIES.slice(0, 6)),
      rng.date('2012-01-01', '2024-03-31'),
      junior ? 'Junior' : rng.chance(0.2) ? 'Social' : 'Full',
      rng.chance(0.25) ? null : email(first, last, id, 'club.example.net'),
    ]);
  }

  const bike: Row[] = [];
  for (let id = 1; id <= 150; id++) {
    const type = rng.pick(['Road', 'Road', 'Gravel', 'Mountain', 'Hybrid']);
    const [brand, model] = rng.pick(BIKES[type]);
    bike.push([
      id,
      // Every member owns at least one bike (ids 1..120), some own two.
      id <= member.length ? id : rng.int(1, member.length),
      brand,
      model,
      type,
      rng.pick([48, 50, 52, 54, 56, 58, 60]),
      rng.chance(0.12) ? null : rng.int(2010, 2024),
      rng.chance(0.2) ? null : Math.round((type === 'Road' ? 7 + rng.next() * 2.5 : 9 + rng.next() * 6) * 10) / 10,
    ]);
  }

  const ride: Row[] = [];
  const difficulties = ['Easy', 'Moderate', 'Hard'];
  for (let id = 1; id <= 80; id++) {
    const difficulty = rng.pick(difficulties);
    const scale = difficulties.indexOf(difficulty) + 1;
    ride.push([
      id,
      `${rng.pick(RIDE_PLACES)} ${rng.pick(RIDE_KINDS)}`,
      rng.date('2021-01-01', '2024-06-30'),
      rng.pick(STARTS),
      Math.round((20 + scale * 25 + rng.next() * 40) * 10) / 10,
      rng.int(50, 500) * scale,
      difficulty,
      rng.chance(0.15) ? null : rng.int(1, member.length),
    ]);
  }

  const participation: Row[] = [];
  for (const r of ride) {
    const riders = new Set<number>();
    const count = rng.int(3, 9);
    while (riders.size < count) riders.add(rng.int(1, member.length));
    for (const m of [...riders].sort((a, b) => a - b)) {
      const own = bike.filter((b) => b[1] === m);
      const speed = 18 + rng.next() * 14; // km/h
      participation.push([
        r[0],
        m,
        rng.chance(0.1) ? null : rng.pick(own)[0],
        rng.chance(0.08) ? null : Math.round(((r[4] as number) / speed) * 60),
      ]);
    }
  }
  return { member, bike, ride, participation };
}

// ---------------------------------------------------------------- writers

const quoteId = (name: string) => `"${name.replace(/"/g, '""')}"`;

function createTable(table: TableDef): string {
  const columns = table.columns.map((c) => `  ${quoteId(c.name)} ${c.type}`);
  const pk = `  PRIMARY KEY (${table.primaryKey.map(quoteId).join(', ')})`;
  const fks = table.foreignKeys.map(
    (fk) => `  FOREIGN KEY (${quoteId(fk.column)}) REFERENCES ${quoteId(fk.refTable)} (${quoteId(fk.refColumn)})`,
  );
  return `CREATE TABLE ${quoteId(table.name)} (\n${[...columns, pk, ...fks].join(',\n')}\n)`;
}

function writeSqlite(path: string, db: DatabaseDef, rows: Rows): void {
  rmSync(path, { force: true });
  const sqlite = new Database(path);
  sqlite.pragma('foreign_keys = ON');
  sqlite.transaction(() => {
    for (const table of db.tables) {
      sqlite.exec(createTable(table));
      const insert = sqlite.prepare(
        `INSERT INTO ${quoteId(table.name)} VALUES (${table.columns.map(() => '?').join(', ')})`,
      );
      for (const row of rows[table.name]) {
        // Integers bind as INTEGER, not REAL (better-sqlite3 binds every JS number as REAL).
        insert.run(row.map((v, i) => (typeof v === 'number' && table.columns[i].type === 'integer' ? BigInt(v) : v)));
      }
    }
  })();
  sqlite.exec('VACUUM');
  sqlite.close();
}

function csvField(value: string): string {
  return /[",\n\r]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

function descriptionCsv(table: TableDef): string {
  const header = 'original_column_name,column_name,column_description,data_format,value_description';
  const lines = table.columns.map((c) =>
    [c.name, c.readableName ?? '', c.description, c.dataFormat ?? c.type, c.valueDescription ?? '']
      .map(csvField)
      .join(','),
  );
  return `${[header, ...lines].join('\n')}\n`;
}

/** One `dev_tables.json` entry (BIRD/Spider schema format; column index 0 is `*`). */
function birdSchema(db: DatabaseDef) {
  const columnIndex = new Map<string, number>();
  const original: [number, string][] = [[-1, '*']];
  const readable: [number, string][] = [[-1, '*']];
  const types = ['text'];
  db.tables.forEach((table, t) =>
    table.columns.forEach((c) => {
      columnIndex.set(`${table.name}.${c.name}`, original.length);
      original.push([t, c.name]);
      readable.push([t, c.readableName || c.name]);
      types.push(c.dataFormat ?? c.type);
    }),
  );
  const index = (table: string, column: string) => columnIndex.get(`${table}.${column}`)!;
  return {
    db_id: db.dbId,
    table_names_original: db.tables.map((t) => t.name),
    table_names: db.tables.map((t) => t.readableName),
    column_names_original: original,
    column_names: readable,
    column_types: types,
    primary_keys: db.tables.map((t) =>
      t.primaryKey.length === 1 ? index(t.name, t.primaryKey[0]) : t.primaryKey.map((c) => index(t.name, c)),
    ),
    foreign_keys: db.tables.flatMap((t) =>
      t.foreignKeys.map((fk) => [index(t.name, fk.column), index(fk.refTable, fk.refColumn)]),
    ),
  };
}

const GENERATORS: Record<string, (rng: Rng) => Rows> = { bookstore: bookstoreRows, cycling_club: cyclingRows };
const SEEDS: Record<string, number> = { bookstore: 20240611, cycling_club: 20240612 };

function main(): void {
  const root = process.argv[2] ?? dirname(fileURLToPath(import.meta.url));
  for (const db of DATABASES) {
    const dir = join(root, 'dev_databases', db.dbId);
    makeDirectory(join(dir, 'database_description'));
    const rows = GENERATORS[db.dbId](prng(SEEDS[db.dbId]));
    writeSqlite(join(dir, `${db.dbId}.sqlite`), db, rows);
    for (const table of db.tables)
      writeFileSync(join(dir, 'database_description', `${table.name}.csv`), descriptionCsv(table));
    const counts = db.tables.map((t) => `${t.name} ${rows[t.name].length}`).join(', ');
    console.log(`${db.dbId}: ${counts}`);
  }
  writeFileSync(join(root, 'dev_tables.json'), `${JSON.stringify(DATABASES.map(birdSchema), null, 2)}\n`);
}

main();
