import type { ToolCall } from '../../core/model.js';
import { allowed, ToolError, type ToolErrorCode } from './errors.js';
import type { Choice } from './catalog.js';

/**
 * Typed, validated access to one call's arguments. Every failure is a ToolError that
 * names the argument and what it accepts.
 */
export class Args {
  constructor(readonly call: ToolCall) {}

  fail(code: ToolErrorCode, message: string): never {
    throw new ToolError(code, this.call.label, `${this.call.name} (label "${this.call.label}"): ${message}`);
  }

  /** Refuses arguments outside `names`; `extendedOnly` ones are refused as not in the pool. */
  expectOnly(names: readonly string[], extendedOnly: readonly string[] = []): void {
    for (const name of Object.keys(this.call.arguments)) {
      if (extendedOnly.includes(name)) {
        this.fail('not_in_pool', `argument "${name}" is not available in this tool pool`);
      }
      if (!names.includes(name)) {
        this.fail('unknown_argument', `unknown argument "${name}"; arguments are ${allowed(names)}`);
      }
    }
  }

  has(name: string): boolean {
    const value = this.call.arguments[name];
    return value !== undefined;
  }

  raw(name: string): unknown {
    return this.call.arguments[name];
  }

  required(name: string): unknown {
    if (!this.has(name)) this.fail('missing_argument', `missing required argument "${name}"`);
    return this.call.arguments[name];
  }

  string(name: string): string {
    const value = this.required(name);
    if (typeof value !== 'string') this.fail('wrong_type', `argument "${name}" must be a string`);
    return value;
  }

  boolean(name: string, fallback: boolean): boolean {
    if (!this.has(name) || this.raw(name) === null) return fallback;
    const value = this.raw(name);
    if (typeof value !== 'boolean') this.fail('wrong_type', `argument "${name}" must be true or false`);
    return value;
  }

  /** An optional integer; null and absent are `undefined`. */
  integer(name: string): number | undefined {
    if (!this.has(name) || this.raw(name) === null) return undefined;
    return this.integerValue(this.raw(name), `argument "${name}"`);
  }

  /** `value` as an integer SQLite can bind; `what` names it in the error (`argument "limit"`). */
  integerValue(value: unknown, what: string): number {
    if (typeof value !== 'number' || !Number.isInteger(value)) this.fail('wrong_type', `${what} must be an integer`);
    // 1e308 is an integer to JavaScript; SQLite binds none past 64 bits (its driver's own message otherwise).
    if (!Number.isSafeInteger(value))
      this.fail('bad_value', `${what} is ${value}; it must lie within ±${Number.MAX_SAFE_INTEGER}`);
    return value;
  }

  /** One of `choices`; choices outside the pool are refused as such. */
  choice<T extends Choice>(name: string, choices: readonly T[], paperOnly: boolean, fallback?: string): T {
    const value = this.has(name) ? this.raw(name) : fallback;
    const offered = choices.filter((c) => !paperOnly || c.paper).map((c) => c.name);
    if (value === undefined)
      this.fail('missing_argument', `missing required argument "${name}"; one of ${allowed(offered)}`);
    if (typeof value !== 'string')
      this.fail('wrong_type', `argument "${name}" must be a string, one of ${allowed(offered)}`);
    const found = choices.find((c) => c.name === value);
    if (!found) this.fail('bad_value', `argument "${name}" is "${value}"; allowed values are ${allowed(offered)}`);
    if (paperOnly && !found.paper) {
      this.fail(
        'not_in_pool',
        `${name} "${value}" is not available in this tool pool; allowed values are ${allowed(offered)}`,
      );
    }
    return found;
  }
}

/** Reads a nested object argument (`operation_args`), refusing anything but a plain object. */
export function objectArg(args: Args, name: string): Record<string, unknown> {
  const value = args.raw(name);
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value))
    args.fail('wrong_type', `argument "${name}" must be an object`);
  return value as Record<string, unknown>;
}
