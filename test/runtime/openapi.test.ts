import SwaggerParser from '@apidevtools/swagger-parser';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expandToSel } from '../../generators/sel/expand.js';
import { decompose } from '../../generators/slot/decompose.js';
import { parseQuery } from '../../generators/sql/normalize.js';
import type { SelBinding, ToolCall } from '../../core/model.js';
import { loadSource } from '../../pipeline/sources/index.js';
import { selToolSpecs } from '../../runtime/sel/specs.js';
import { keysForInitialization, slotToolSpecs, toOpenApi } from '../../runtime/slot/specs.js';

const demo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../seeds/demo');

/** The published OpenAPI documents pass a real OpenAPI 3.1 validator, for both pools and SEL universes. */
describe('OpenAPI documents of the tool specs', () => {
  test('SLOT (both pools) and SEL documents of the demo databases are valid OpenAPI 3.1', async () => {
    const source = await loadSource(demo);
    for (const db of source.databases) {
      const everyTable: ToolCall = {
        name: 'initialize_active_data',
        label: 'starting_table_var',
        arguments: { database: db.dbId, tables: db.tables.map((t) => ({ alias: t.name, table: t.name })), joins: [] },
      };
      const keys = keysForInitialization(db, [everyTable]);
      for (const pool of ['paper', 'extended'] as const) {
        const doc = toOpenApi(slotToolSpecs(keys, pool), { title: `${db.dbId} ${pool}`, version: '1' });
        const api = (await SwaggerParser.validate(structuredClone(doc) as never)) as { openapi: string; paths: object };
        expect(api.openapi).toBe('3.1.0');
        expect(Object.keys(api.paths).length).toBe(pool === 'paper' ? 7 : 11);
      }

      const bindings: Record<string, SelBinding> = {};
      for (const instance of source.instances.filter((i) => i.dbId === db.dbId)) {
        const query = parseQuery(instance.sql, db);
        const slot = query.ok ? decompose(query.value, db, 'extended') : undefined;
        const sel = slot?.ok ? expandToSel(slot.value, db, 'extended') : undefined;
        if (sel?.ok) Object.assign(bindings, sel.value.bindings);
      }
      expect(Object.keys(bindings).length).toBeGreaterThan(20);
      const doc = toOpenApi(selToolSpecs(bindings, keys, 'extended'), { title: `${db.dbId} sel`, version: '1' });
      await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toMatchObject({ openapi: '3.1.0' });
    }
  });
});
