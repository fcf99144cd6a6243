/**
 * Operator precedence, restored. node-sql-parser 5.4 (its sqlite, mysql and postgresql
 * grammars alike) puts AND and OR on one level, all comparison operators on another and `||`
 * on the level of `*`, each associated to the left, and reads `NOT (x)` followed by an
 * operator as a call of a function NOT: `a OR b AND c` comes out as `(a OR b) AND c`, `a = b < c` as `(a = b) < c`,
 * `a * b || c` as `(a * b) || c`, `NOT (a) = 1` as `(NOT a) = 1`. SQLite reads
 * `a OR (b AND c)`, `a = (b < c)`, `a * (b || c)`, `NOT ((a) = 1)` (lang_expr.html,
 * "Operators"). Every consumer of the parse must see SQLite's reading, so the parser's tree
 * is re-associated before it is normalized.
 *
 * A chain of operators not broken by parentheses still lists its operands and operators in
 * the order written (an in-order walk of any tree over them does, a prefix NOT before its
 * operand), so the chain is flattened back into that sequence and rebuilt by SQLite's
 * precedence, binary operators associating to the left. Parenthesized sub-expressions (the
 * parser marks them `parentheses: true`) and every other node (CASE, function calls,
 * BETWEEN's bounds, IN lists, subqueries) are operands, re-associated inside.
 */

import { functionName, type Raw } from './raw-ast.js';

/** SQLite's operators by level, tighter-binding ones later; NOT is the one prefix operator here. */
const LEVELS: Record<string, number> = Object.fromEntries(
  [
    ['OR'],
    ['AND'],
    ['NOT'],
    [
      '=',
      '==',
      '!=',
      '<>',
      'IS',
      'IS NOT',
      'IN',
      'NOT IN',
      'LIKE',
      'NOT LIKE',
      'GLOB',
      'NOT GLOB',
      'MATCH',
      'NOT MATCH',
      'REGEXP',
      'NOT REGEXP',
      'BETWEEN',
      'NOT BETWEEN',
    ],
    ['<', '<=', '>', '>='],
    ['&', '|', '<<', '>>'],
    ['+', '-'],
    ['*', '/', '%'],
    ['||', '->', '->>'],
  ].flatMap((operators, level) => operators.map((op) => [op, level])),
);

/** A chain's element: an operand, a binary operator or a prefix NOT (nodes without their operands). */
type Item = { operand: Raw } | { operator: Raw; level: number; prefix: boolean };

/** One step of a chain: `node` split into its operator and operands (one for NOT), or null for an operand. */
function split(node: Raw): { operator: Raw; level: number; operands: Raw[] } | null {
  if (node?.type === 'binary_expr') {
    const level = LEVELS[String(node.operator).toUpperCase()];
    if (level === undefined) return null;
    const { left, right, parentheses, ...operator } = node;
    return { operator, level, operands: [left, right] };
  }
  if (node?.type === 'unary_expr' && String(node.operator).toUpperCase() === 'NOT') {
    const { expr, parentheses, ...operator } = node;
    return { operator, level: LEVELS.NOT, operands: [expr] };
  }
  // `NOT (x) = 1` comes out as a call of a function NOT compared with 1; SQLite reads NOT ((x) = 1).
  if (
    node?.type === 'function' &&
    !node.over &&
    functionName(node).toUpperCase() === 'NOT' &&
    node.args?.value?.length === 1
  ) {
    return {
      operator: { type: 'unary_expr', operator: 'NOT' },
      level: LEVELS.NOT,
      operands: [{ ...node.args.value[0], parentheses: true }],
    };
  }
  return null;
}

/** The parser's tree with every operator chain associated as SQLite associates it. */
export function reassociate(node: Raw): Raw {
  if (Array.isArray(node)) return node.map(reassociate);
  if (node === null || typeof node !== 'object') return node;
  if (split(node) !== null) return rebuildChain(node);
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, reassociate(value)]));
}

function rebuildChain(root: Raw): Raw {
  const items: Item[] = [];
  const flatten = (node: Raw, isRoot: boolean): void => {
    const step = split(node);
    if (step === null || (!isRoot && node.parentheses)) {
      items.push({ operand: reassociate(node) });
      return;
    }
    const prefix = step.operands.length === 1;
    if (!prefix) flatten(step.operands[0], false);
    items.push({ operator: step.operator, level: step.level, prefix });
    flatten(step.operands[step.operands.length - 1], false);
  };
  flatten(root, true);
  const tree = byPrecedence(items);
  return root.parentheses ? { ...tree, parentheses: true } : tree;
}

/** Operator precedence parsing of the items in text order; binary operators associate to the left. */
function byPrecedence(items: Item[]): Raw {
  const output: Raw[] = [];
  const pending: Extract<Item, { operator: Raw }>[] = [];
  const reduce = (): void => {
    const { operator, prefix } = pending.pop()!;
    const right = output.pop();
    output.push(prefix ? { ...operator, expr: right } : { ...operator, left: output.pop(), right });
  };
  for (const item of items) {
    if ('operand' in item) {
      output.push(item.operand);
      continue;
    }
    // A prefix operator waits for its operand; a binary one first closes what binds at least as tightly.
    if (!item.prefix) while (pending.length > 0 && pending[pending.length - 1].level >= item.level) reduce();
    pending.push(item);
  }
  while (pending.length > 0) reduce();
  return output[0];
}
