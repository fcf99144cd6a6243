/** node-sql-parser's AST, as the normalizer and the precedence pass read it. */

/* node-sql-parser's AST is loosely typed; we read it structurally. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Raw = any;

/** A function node's name as written (`NOT`, `strftime`, `schema.fn`). */
export function functionName(node: Raw): string {
  const name = node.name;
  if (typeof name === 'string') return name;
  const parts: Raw[] = name?.name ?? [];
  return parts.map((p) => p.value).join('.');
}
