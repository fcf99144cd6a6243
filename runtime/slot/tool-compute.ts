import { objectArg, type Args } from './args.js';
import type { CallScope } from './call-scope.js';
import { isWindow, OPERATIONS } from './catalog.js';
import { derivedKey } from './keys.js';
import { operationSql } from './operations.js';
import { HIDDEN_PREFIX, scalarShape, withDerivedColumn, type Rel, type Shape } from './relation.js';
import { cte, ident, sql } from './sqlfrag.js';

/** transform_data and calculate: an operation (operations.ts) on each row's key, or on one value. */

export function transform(call: CallScope): Shape {
  const { args } = call;
  args.expectOnly(['data_source', 'key_name', 'operation_type', 'operation_args']);
  const rel = call.source('data_source');
  const key = call.key(rel, 'key_name');
  const op = args.choice('operation_type', OPERATIONS, call.paper);
  const { new_key_name: requested, ...opArgs } = objectArg(args, 'operation_args');
  const expression = operationSql(op, ident(key), opArgs, args, call.resolver(rel), call.paper);
  const newKey = newKeyName(args, rel, requested, `${key}_${op.name}`);
  const body = sql`SELECT *, ${expression} AS ${ident(newKey)} FROM ${cte(rel.cte)}`;
  return withDerivedColumn(rel, newKey, `${key} after ${op.name}: ${op.description}`, body);
}

export function calculate(call: CallScope): Shape {
  const { args } = call;
  args.expectOnly(['value', 'operation_type', 'operation_args']);
  const value = args.required('value');
  const subject = call.scalarValue(value, 'argument "value"');
  const op = args.choice('operation_type', OPERATIONS, call.paper);
  // A window reads the rows of a table; calculate has one value.
  if (isWindow(op)) args.fail('bad_value', `operation "${op.name}" works over the rows of a table: use transform_data`);
  if (
    (op.name === 'datetime' || op.name === 'julianday') &&
    typeof value === 'string' &&
    value.trim().toLowerCase() === 'now'
  ) {
    args.fail('bad_value', `operation "${op.name}" of 'now' depends on when it runs, not on the data`);
  }
  const expression = operationSql(
    op,
    subject,
    objectArg(args, 'operation_args'),
    args,
    call.resolver(undefined),
    call.paper,
  );
  return scalarShape(call.label, sql`SELECT ${expression} AS "__v"`);
}

/** transform_data's new key: `requested` if the call names one, else derived from `base`. */
function newKeyName(args: Args, rel: Rel, requested: unknown, base: string): string {
  if (requested === undefined || requested === null) return derivedKey(rel.keys, base);
  if (typeof requested !== 'string' || requested === '')
    args.fail('wrong_type', 'operation_args.new_key_name must be a non-empty string');
  if (requested.startsWith(HIDDEN_PREFIX))
    args.fail('bad_value', `operation_args.new_key_name must not start with "${HIDDEN_PREFIX}"`);
  if (rel.keys.includes(requested) || rel.members?.keys.includes(requested)) {
    args.fail('bad_value', `operation_args.new_key_name "${requested}" is already a key of "$${rel.label}$"`);
  }
  return requested;
}
