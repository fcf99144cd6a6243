/**
 * The demo databases' schemas: the single source of the SQLite DDL, the BIRD
 * `dev_tables.json` entries and the `database_description/<table>.csv` files.
 */

export interface ColumnDef {
  name: string;
  /** Declared SQLite type. */
  type: 'integer' | 'text' | 'real';
  /** BIRD's `column_name`: an expanded name, empty when the original says it all. */
  readableName?: string;
  description: string;
  /** BIRD's `data_format` (`integer`, `text`, `real`, `date`). */
  dataFormat?: string;
  valueDescription?: string;
}

export interface TableDef {
  name: string;
  /** BIRD's `table_names` entry. */
  readableName: string;
  columns: ColumnDef[];
  primaryKey: string[];
  foreignKeys: { column: string; refTable: string; refColumn: string }[];
}

export interface DatabaseDef {
  dbId: string;
  tables: TableDef[];
}

export const bookstore: DatabaseDef = {
  dbId: 'bookstore',
  tables: [
    {
      name: 'publisher',
      readableName: 'publisher',
      primaryKey: ['publisher_id'],
      foreignKeys: [],
      columns: [
        {
          name: 'publisher_id',
          type: 'integer',
          readableName: 'publisher id',
          description: 'unique id of the publisher',
        },
        {
          name: 'publisher_name',
          type: 'text',
          readableName: 'publisher name',
          description: 'name of the publishing house',
        },
        { name: 'city', type: 'text', description: 'city of the head office' },
        { name: 'country', type: 'text', description: 'country of the head office' },
        {
          name: 'founded_year',
          type: 'integer',
          readableName: 'founded year',
          description: 'year the publisher was founded',
        },
      ],
    },
    {
      name: 'author',
      readableName: 'author',
      primaryKey: ['author_id'],
      foreignKeys: [],
      columns: [
        { name: 'author_id', type: 'integer', readableName: 'author id', description: 'unique id of the author' },
        { name: 'first_name', type: 'text', readableName: 'first name', description: 'first name of the author' },
        { name: 'last_name', type: 'text', readableName: 'last name', description: 'last name of the author' },
        {
          name: 'birth_year',
          type: 'integer',
          readableName: 'birth year',
          description: 'year the author was born',
          valueDescription: 'NULL: unknown',
        },
        { name: 'nationality', type: 'text', description: 'nationality of the author' },
      ],
    },
    {
      name: 'book',
      readableName: 'book',
      primaryKey: ['book_id'],
      foreignKeys: [
        { column: 'author_id', refTable: 'author', refColumn: 'author_id' },
        { column: 'publisher_id', refTable: 'publisher', refColumn: 'publisher_id' },
      ],
      columns: [
        { name: 'book_id', type: 'integer', readableName: 'book id', description: 'unique id of the book' },
        { name: 'title', type: 'text', description: 'title of the book' },
        {
          name: 'author_id',
          type: 'integer',
          readableName: 'author id',
          description: 'id of the author who wrote the book',
        },
        { name: 'publisher_id', type: 'integer', readableName: 'publisher id', description: 'id of the publisher' },
        {
          name: 'genre',
          type: 'text',
          description: 'literary genre',
          valueDescription: 'Fiction / Mystery / Science Fiction / Biography / History / Poetry / Children',
        },
        {
          name: 'publication_date',
          type: 'text',
          readableName: 'publication date',
          description: 'date the book was published',
          dataFormat: 'date',
          valueDescription: 'YYYY-MM-DD',
        },
        { name: 'Price (USD)', type: 'real', readableName: 'price', description: 'list price in US dollars' },
        {
          name: 'Page Count',
          type: 'integer',
          readableName: 'page count',
          description: 'number of pages',
          valueDescription: 'NULL: not recorded (e.g. e-book only editions)',
        },
        {
          name: 'language',
          type: 'text',
          description: 'language of the edition',
          valueDescription: 'English / French / German / Spanish',
        },
      ],
    },
    {
      name: 'customer',
      readableName: 'customer',
      primaryKey: ['customer_id'],
      foreignKeys: [],
      columns: [
        { name: 'customer_id', type: 'integer', readableName: 'customer id', description: 'unique id of the customer' },
        { name: 'first_name', type: 'text', readableName: 'first name', description: 'first name of the customer' },
        { name: 'last_name', type: 'text', readableName: 'last name', description: 'last name of the customer' },
        {
          name: 'email',
          type: 'text',
          description: 'e-mail address',
          valueDescription: 'NULL: the customer gave none',
        },
        { name: 'city', type: 'text', description: 'city the customer lives in' },
        {
          name: 'signup_date',
          type: 'text',
          readableName: 'signup date',
          description: 'date the customer opened an account',
          dataFormat: 'date',
          valueDescription: 'YYYY-MM-DD',
        },
        {
          name: 'loyalty_tier',
          type: 'text',
          readableName: 'loyalty tier',
          description: 'loyalty programme tier',
          valueDescription: 'Gold / Silver / Bronze; NULL: not a member of the programme',
        },
      ],
    },
    {
      name: 'book_order',
      readableName: 'book order',
      primaryKey: ['order_id'],
      foreignKeys: [
        { column: 'customer_id', refTable: 'customer', refColumn: 'customer_id' },
        { column: 'book_id', refTable: 'book', refColumn: 'book_id' },
      ],
      columns: [
        { name: 'order_id', type: 'integer', readableName: 'order id', description: 'unique id of the order line' },
        {
          name: 'customer_id',
          type: 'integer',
          readableName: 'customer id',
          description: 'id of the ordering customer',
        },
        { name: 'book_id', type: 'integer', readableName: 'book id', description: 'id of the ordered book' },
        {
          name: 'order_date',
          type: 'text',
          readableName: 'order date',
          description: 'date the order was placed',
          dataFormat: 'date',
          valueDescription: 'YYYY-MM-DD',
        },
        { name: 'quantity', type: 'integer', description: 'number of copies ordered' },
        {
          name: 'Discount (%)',
          type: 'real',
          readableName: 'discount',
          description: 'discount granted on the list price, in percent',
          valueDescription: 'NULL: no discount',
        },
        {
          name: 'status',
          type: 'text',
          description: 'order status',
          valueDescription: 'Delivered / Shipped / Cancelled / Returned',
        },
      ],
    },
  ],
};

export const cyclingClub: DatabaseDef = {
  dbId: 'cycling_club',
  tables: [
    {
      name: 'member',
      readableName: 'member',
      primaryKey: ['member_id'],
      foreignKeys: [],
      columns: [
        { name: 'member_id', type: 'integer', readableName: 'member id', description: 'unique id of the club member' },
        { name: 'first_name', type: 'text', readableName: 'first name', description: 'first name of the member' },
        { name: 'last_name', type: 'text', readableName: 'last name', description: 'last name of the member' },
        { name: 'gender', type: 'text', description: 'gender of the member', valueDescription: 'F: female; M: male' },
        {
          name: 'birth_date',
          type: 'text',
          readableName: 'birth date',
          description: 'date of birth',
          dataFormat: 'date',
          valueDescription: 'YYYY-MM-DD',
        },
        { name: 'city', type: 'text', description: 'city the member lives in' },
        {
          name: 'join_date',
          type: 'text',
          readableName: 'join date',
          description: 'date the member joined the club',
          dataFormat: 'date',
          valueDescription: 'YYYY-MM-DD',
        },
        {
          name: 'membership_type',
          type: 'text',
          readableName: 'membership type',
          description: 'kind of membership',
          valueDescription: 'Full / Junior / Social',
        },
        { name: 'email', type: 'text', description: 'e-mail address', valueDescription: 'NULL: not given' },
      ],
    },
    {
      name: 'bike',
      readableName: 'bike',
      primaryKey: ['bike_id'],
      foreignKeys: [{ column: 'owner_id', refTable: 'member', refColumn: 'member_id' }],
      columns: [
        { name: 'bike_id', type: 'integer', readableName: 'bike id', description: 'unique id of the bike' },
        {
          name: 'owner_id',
          type: 'integer',
          readableName: 'owner id',
          description: 'id of the member who owns the bike',
        },
        { name: 'brand', type: 'text', description: 'manufacturer of the bike' },
        { name: 'model', type: 'text', description: 'model name' },
        {
          name: 'bike_type',
          type: 'text',
          readableName: 'bike type',
          description: 'kind of bike',
          valueDescription: 'Road / Gravel / Mountain / Hybrid',
        },
        {
          name: 'Frame Size (cm)',
          type: 'integer',
          readableName: 'frame size',
          description: 'frame size in centimetres',
        },
        {
          name: 'purchase_year',
          type: 'integer',
          readableName: 'purchase year',
          description: 'year the bike was bought',
          valueDescription: 'NULL: unknown',
        },
        {
          name: 'Weight (kg)',
          type: 'real',
          readableName: 'weight',
          description: 'weight of the bike in kilograms',
          valueDescription: 'NULL: not weighed',
        },
      ],
    },
    {
      name: 'ride',
      readableName: 'ride',
      primaryKey: ['ride_id'],
      foreignKeys: [{ column: 'leader_id', refTable: 'member', refColumn: 'member_id' }],
      columns: [
        { name: 'ride_id', type: 'integer', readableName: 'ride id', description: 'unique id of the group ride' },
        { name: 'ride_name', type: 'text', readableName: 'ride name', description: 'name of the ride' },
        {
          name: 'ride_date',
          type: 'text',
          readableName: 'ride date',
          description: 'date of the ride',
          dataFormat: 'date',
          valueDescription: 'YYYY-MM-DD',
        },
        { name: 'start_location', type: 'text', readableName: 'start location', description: 'where the ride starts' },
        {
          name: 'Distance (km)',
          type: 'real',
          readableName: 'distance',
          description: 'length of the route in kilometres',
        },
        {
          name: 'Elevation Gain (m)',
          type: 'integer',
          readableName: 'elevation gain',
          description: 'total climbing in metres',
        },
        {
          name: 'difficulty',
          type: 'text',
          description: 'difficulty grade',
          valueDescription: 'Easy / Moderate / Hard',
        },
        {
          name: 'leader_id',
          type: 'integer',
          readableName: 'leader id',
          description: 'id of the member leading the ride',
          valueDescription: 'NULL: self-guided ride',
        },
      ],
    },
    {
      name: 'participation',
      readableName: 'participation',
      primaryKey: ['ride_id', 'member_id'],
      foreignKeys: [
        { column: 'ride_id', refTable: 'ride', refColumn: 'ride_id' },
        { column: 'member_id', refTable: 'member', refColumn: 'member_id' },
        { column: 'bike_id', refTable: 'bike', refColumn: 'bike_id' },
      ],
      columns: [
        { name: 'ride_id', type: 'integer', readableName: 'ride id', description: 'id of the ride' },
        {
          name: 'member_id',
          type: 'integer',
          readableName: 'member id',
          description: 'id of the participating member',
        },
        {
          name: 'bike_id',
          type: 'integer',
          readableName: 'bike id',
          description: 'id of the bike used',
          valueDescription: 'NULL: a borrowed bike',
        },
        {
          name: 'Finish Time (min)',
          type: 'integer',
          readableName: 'finish time',
          description: 'time to finish the ride in minutes',
          valueDescription: 'NULL: did not finish',
        },
      ],
    },
  ],
};

export const DATABASES: DatabaseDef[] = [bookstore, cyclingClub];
