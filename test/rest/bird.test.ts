import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { describe, expect, test } from '@jest/globals';
import { bindPlaceholders } from '../../runtime/rest/bind.js';
import { dedupEndpoints } from '../../generators/rest/dedup.js';
import { checkEndpointSpec } from '../../generators/rest/format-check.js';
import type { SynthesizedEndpoint } from '../../runtime/rest/spec.js';
import { synthesizeFromTemplate } from '../../generators/rest/template.js';
import { resolveDoubleQuotedStrings, schemaIdentifiers } from '../../generators/sql/double-quotes.js';
import { resultShape } from '../../runtime/sql/result-shape.js';
import { loadSource } from '../../pipeline/sources/index.js';
import { BIRD_DIR } from '../sql/fixtures.js';

/** Rows as comparable text; unordered results compare as multisets. */
function rowsKey(rows: unknown[], ordered: boolean): string {
  const lines = rows.map((r) => JSON.stringify(r));
  return JSON.stringify(ordered ? lines : lines.sort());
}

(existsSync(BIRD_DIR) ? describe : describe.skip)('template REST synthesis on BIRD dev (NL2API_BIRD_DIR)', () => {
  test('≥ 95% of the gold SQL synthesize, pass the format check and return the gold rows', async () => {
    const source = await loadSource(BIRD_DIR);
    const databases = new Map(source.databases.map((db) => [db.dbId, db]));
    const connections = new Map<string, Database.Database>();
    const byDb = new Map<string, { instanceId: string; endpoint: SynthesizedEndpoint }[]>();
    const failures: string[] = [];
    let verified = 0;
    let parameters = 0;
    for (const item of source.instances) {
      const db = databases.get(item.dbId)!;
      const outcome = synthesizeFromTemplate(item, db, 'bird-dev');
      if (!outcome.ok) {
        failures.push(`${item.id}: ${outcome.category} ${outcome.message}`);
        continue;
      }
      const { spec, call } = outcome.value;
      const verdict = checkEndpointSpec(spec, db);
      if (!verdict.ok) {
        failures.push(`${item.id}: ${verdict.category} ${verdict.message}`);
        continue;
      }
      if (!connections.has(db.dbId)) connections.set(db.dbId, new Database(db.path, { readonly: true }));
      const connection = connections.get(db.dbId)!;
      const goldSql = resolveDoubleQuotedStrings(item.sql, schemaIdentifiers(db, item.sql));
      const gold = connection.prepare(goldSql).raw().all();
      const bound = bindPlaceholders(spec.sql, call.arguments, spec.parameters);
      const got = connection
        .prepare(bound.sql)
        .raw()
        .all(...bound.params);
      const { ordered } = resultShape(goldSql);
      if (rowsKey(got, ordered) !== rowsKey(gold, ordered)) {
        failures.push(`${item.id}: different rows`);
        continue;
      }
      verified++;
      parameters += spec.parameters.length;
      byDb.set(db.dbId, [...(byDb.get(db.dbId) ?? []), { instanceId: item.id, endpoint: outcome.value }]);
    }
    for (const connection of connections.values()) connection.close();

    const dedup = [...byDb].map(([dbId, list]) => {
      const result = dedupEndpoints(list, databases.get(dbId)!);
      return {
        dbId,
        before: list.length,
        after: result.canonical.length,
        longNames: result.canonical.filter((s) => s.operationId.length > 64).length,
      };
    });
    console.log(
      `REST template on BIRD dev: ${verified}/${source.instances.length} verified, mean parameters ${(parameters / verified).toFixed(2)}\n` +
        dedup.map((d) => `${d.dbId}: ${d.before} → ${d.after}`).join('\n') +
        `\nfailures:\n${failures.join('\n')}`,
    );
    expect(source.instances).toHaveLength(1052);
    expect(verified / source.instances.length).toBeGreaterThanOrEqual(0.95);
    expect(dedup.every((d) => d.longNames === 0 && d.after <= d.before)).toBe(true);
  });
});
