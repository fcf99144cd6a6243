import { perObject } from '../../core/per-object.js';
import type { DatabaseInfo } from '../../core/model.js';
import type { EndpointSpec } from '../../runtime/rest/spec.js';
import { withSampleValues } from '../rest/format-check.js';
import { rowOrderDependence } from '../sql/row-order.js';

/**
 * Whether a chain's answer provably does not depend on the order SQLite reads rows in, so that
 * running it again with every scan reversed (the `reordered` variant) can only give the same
 * answer. It does not when no hop's answer does (generators/sql/row-order.ts, `none`: as
 * compared, a multiset), for every link makes its value of the multiset of a field's values
 * (`value` of exactly one row, the largest, the smallest, …), and the composed statement is
 * those hops nested. Read once per endpoint and database.
 */
export function chainIgnoresRowOrder(endpoints: readonly EndpointSpec[], db: DatabaseInfo): boolean {
  const ignores = perDatabase(db);
  return endpoints.every((endpoint) => ignores(endpoint));
}

const perDatabase = perObject((db: DatabaseInfo) =>
  perObject((endpoint: EndpointSpec) => rowOrderDependence(withSampleValues(endpoint), db).compared === 'none'),
);
