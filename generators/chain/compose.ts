import { replacePlaceholders } from '../../runtime/rest/placeholders.js';
import type { ArgumentValue, EndpointSpec, ParameterSpec } from '../../runtime/rest/spec.js';
import { transformOf, type TransformKind } from './transforms.js';

/**
 * A chain's meaning as one SQL statement (issue 36): hop k's SQL becomes a scalar subquery in
 * the place of the parameter of hop k+1 it binds, the transform in SQL around it. Its
 * placeholders stay placeholders, renamed per hop (`:h1_name`), so the statement runs with
 * bound values like every endpoint, and can be served or shown as it is.
 */

export interface ChainLink {
  /** The parameter of this hop given by the hop before it. */
  param: string;
  /** Position of the field of the hop before (in its response and its SQL's result columns). */
  fieldIndex: number;
  transform: TransformKind;
}

export interface ComposableHop {
  endpoint: Pick<EndpointSpec, 'sql' | 'parameters'>;
  /** The arguments given to it directly (hop 1: all of them; later hops: the others, usually none). */
  args: Readonly<Record<string, ArgumentValue>>;
  /** Absent on the first hop. */
  link?: ChainLink;
  /** Result columns of its SQL (the width of its response). */
  width: number;
}

export interface ComposedStatement {
  sql: string;
  parameters: ParameterSpec[];
  args: Record<string, ArgumentValue>;
}

/** Hop `k`'s (1-based) name for its own parameter `name`. */
export const hopParameter = (k: number, name: string) => `h${k}_${name}`;

export function composeChain(hops: readonly ComposableHop[]): ComposedStatement {
  const parameters: ParameterSpec[] = [];
  const args: Record<string, ArgumentValue> = {};
  let previous: { sql: string; width: number } | null = null;
  hops.forEach((hop, i) => {
    const k = i + 1;
    const bridged = hop.link?.param;
    for (const param of hop.endpoint.parameters) {
      if (param.name === bridged) continue;
      parameters.push({ ...param, name: hopParameter(k, param.name) });
      if (Object.hasOwn(hop.args, param.name)) args[hopParameter(k, param.name)] = hop.args[param.name];
    }
    const bridge = previous && hop.link ? scalarOf(previous, hop.link, k - 1) : null;
    const sql = replacePlaceholders(hop.endpoint.sql, (name) =>
      name === bridged && bridge !== null ? bridge : `:${hopParameter(k, name)}`,
    );
    previous = { sql, width: hop.width };
  });
  return { sql: previous!.sql, parameters, args };
}

/** The previous hop's rows, named `__chain_h<k>` with columns `__c0…`, made into one value by the link's transform. */
function scalarOf(previous: { sql: string; width: number }, link: ChainLink, k: number): string {
  const table = `__chain_h${k}`;
  const columns = Array.from({ length: previous.width }, (_, i) => `__c${i}`);
  const body = transformOf(link.transform).sql(table, `__c${link.fieldIndex}`);
  // A newline before each closing parenthesis: a trailing `--` comment in the SQL must not swallow it.
  return `(WITH ${table}(${columns.join(', ')}) AS (${previous.sql}\n) ${body}\n)`;
}
