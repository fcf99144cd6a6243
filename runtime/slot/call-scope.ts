import { BINDABLE_NUMBER, isBindableNumber } from '../../core/numbers.js';
import type { Args } from './args.js';
import { allowed } from './errors.js';
import type { OperandResolver } from './operations.js';
import { orderBy, type Rel } from './relation.js';
import { cte, ident, join, param, sql, type Frag } from './sqlfrag.js';

/**
 * One call as a tool compiles it: its arguments, its label, the pool, and the outputs of
 * the earlier calls that its references, keys and values are resolved against. Every
 * failure is a ToolError (through `args.fail`) that names the argument at fault.
 */
export class CallScope {
  constructor(
    readonly args: Args,
    readonly label: string,
    readonly paper: boolean,
    private readonly rels: ReadonlyMap<string, Rel>,
  ) {}

  /** `"$LABEL$"` or `"$LABEL.key$"`; undefined for anything that is not a reference. */
  private reference(value: unknown, where: string): { rel: Rel; field?: string } | undefined {
    if (typeof value !== 'string' || !/^\$[^$]+\$$/.test(value)) return undefined;
    const inner = value.slice(1, -1);
    const whole = this.rels.get(inner);
    if (whole) return { rel: whole };
    const dot = inner.indexOf('.');
    const rel = dot > 0 ? this.rels.get(inner.slice(0, dot)) : undefined;
    if (!rel) {
      this.args.fail(
        'bad_reference',
        `${where} refers to "${value}", but no earlier call has that label; labels so far are ${allowed([...this.rels.keys()])}`,
      );
    }
    const field = inner.slice(dot + 1);
    if (rel.kind === 'scalar' || !rel.keys.includes(field)) {
      this.args.fail(
        'bad_reference',
        `${where}: "${value}" names no column of "${rel.label}"; its columns are ${allowed(rel.keys)}`,
      );
    }
    return { rel, field };
  }

  /** The table (or list) a `data_source`-like argument refers to. */
  source(name: string): Rel {
    const value = this.args.required(name);
    const ref = this.reference(value, `argument "${name}"`);
    if (!ref) {
      this.args.fail(
        'bad_reference',
        `argument "${name}" must be a reference "$LABEL$" to an earlier output, e.g. "$starting_table_var$"`,
      );
    }
    if (ref.field !== undefined)
      this.args.fail('bad_reference', `argument "${name}" takes a whole output "$${ref.rel.label}$", not a column`);
    if (ref.rel.kind === 'scalar')
      this.args.fail('wrong_type', `argument "${name}": "$${ref.rel.label}$" is a single value, not a table`);
    return ref.rel;
  }

  /** A column key of `rel`, named by argument `name` (or given as `value`). */
  key(rel: Rel, name: string, value: unknown = this.args.required(name)): string {
    if (typeof value !== 'string')
      this.args.fail('wrong_type', `argument "${name}" must be a key (string); keys are ${allowed(rel.keys)}`);
    if (rel.keys.includes(value)) return value;
    if (rel.members?.keys.includes(value)) {
      this.args.fail(
        'not_grouped',
        `argument "${name}": "${value}" is not a column of the grouped table "$${rel.label}$" (only its group keys and aggregates are: ${allowed(rel.keys)}); aggregate it with aggregate_data first`,
      );
    }
    this.args.fail(
      'unknown_key',
      `argument "${name}": unknown key "${value}" in "$${rel.label}$"; keys are ${allowed(rel.keys)}`,
    );
  }

  /** One or more keys: a string, or (extended pool) a non-empty list of strings. */
  keyList(rel: Rel, name: string): { keys: string[]; many: boolean } {
    const value = this.args.required(name);
    if (!Array.isArray(value)) return { keys: [this.key(rel, name, value)], many: false };
    if (this.paper)
      this.args.fail('not_in_pool', `argument "${name}" must be a single key in this tool pool, not a list`);
    if (value.length === 0) this.args.fail('bad_value', `argument "${name}" must not be an empty list`);
    const keys = value.map((v) => this.key(rel, name, v));
    if (new Set(keys).size !== keys.length) this.args.fail('bad_value', `argument "${name}" lists a key twice`);
    return { keys, many: true };
  }

  /** A single value: a literal (bound), or a reference to a scalar / first value of a list. */
  scalarValue(value: unknown, where: string): Frag {
    const ref = this.reference(value, where);
    if (ref) {
      if (ref.rel.kind === 'scalar') return sql`(SELECT "__v" FROM ${cte(ref.rel.cte)})`;
      const column = ref.field ?? this.onlyColumn(ref.rel, where);
      return sql`(SELECT ${ident(column)} FROM ${cte(ref.rel.cte)} ORDER BY ${orderBy(ref.rel.order)} LIMIT 1)`;
    }
    if (typeof value === 'number' && !isBindableNumber(value))
      this.args.fail('bad_value', `${where} is ${value}; it must be ${BINDABLE_NUMBER}`);
    if (value === null || typeof value === 'string' || typeof value === 'number') return param(value);
    this.args.fail('wrong_type', `${where} must be a string, a number, null or a reference "$LABEL$"`);
  }

  /** A list of values rendered `(...)` for IN: a JSON list, or a reference to a list/column. */
  listValue(value: unknown, where: string): Frag {
    if (Array.isArray(value))
      return sql`(${join(
        value.map((v, i) => this.scalarValue(v, `${where}[${i}]`)),
        ', ',
      )})`;
    const ref = this.reference(value, where);
    if (!ref) this.args.fail('wrong_type', `${where} must be a list of values or a reference "$LABEL$" to a list`);
    if (ref.rel.kind === 'scalar') return sql`(SELECT "__v" FROM ${cte(ref.rel.cte)})`;
    const column = ref.field ?? this.onlyColumn(ref.rel, where);
    return sql`(SELECT ${ident(column)} FROM ${cte(ref.rel.cte)})`;
  }

  private onlyColumn(rel: Rel, where: string): string {
    if (rel.keys.length !== 1) {
      this.args.fail(
        'bad_reference',
        `${where}: "$${rel.label}$" has several columns; name one as "$${rel.label}.<key>$" (${allowed(rel.keys)})`,
      );
    }
    return rel.keys[0];
  }

  /** Operands of an operation: columns of `rel` (none for calculate) or values; `rel`'s keys and row order for windows. */
  resolver(rel: Rel | undefined): OperandResolver {
    const table = (path: string): Rel => {
      if (!rel) this.args.fail('bad_value', `${path}: calculate has no rows; use transform_data`);
      return rel;
    };
    return {
      key: (value, path) => ident(this.key(table(path), path, value)),
      rowOrder: () => orderBy(table('operation_args').order),
      operand: (value, path) => {
        if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
          const operand = value as Record<string, unknown>;
          const names = Object.keys(operand);
          if (names.length === 1 && names[0] === 'key_name') {
            if (!rel) this.args.fail('bad_value', `${path}: calculate has no columns; give {"value": ...}`);
            return ident(this.key(rel, `${path}.key_name`, operand.key_name));
          }
          if (names.length === 1 && names[0] === 'value') return this.scalarValue(operand.value, `${path}.value`);
          this.args.fail('wrong_type', `${path} must be {"key_name": <key>} or {"value": <value or "$LABEL$">}`);
        }
        return this.scalarValue(value, path);
      },
      values: (value, path) => this.listValue(value, path),
    };
  }
}
