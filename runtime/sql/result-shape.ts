import { tokenize, topLevel } from './lexer.js';

/**
 * What a query's answer is, read off its SQL: whether row order is part of it and whether
 * its rows are distinct. The gold stage records it; the REST server orders the rows of an
 * unordered endpoint itself (runtime/rest/endpoint.ts).
 */

export interface ResultShape {
  /** The top-level query has ORDER BY. */
  ordered: boolean;
  /** The top-level query returns distinct rows: SELECT DISTINCT, or a compound ending in UNION/INTERSECT/EXCEPT. */
  distinct: boolean;
}

/**
 * Read off the top-level query's words (outside parentheses, quotes and comments): no full
 * parse is needed, and this way SQL that no parser knows gets a shape too. ORDER BY anywhere
 * at that level orders the answer (a compound's ORDER BY sits after its last SELECT); a
 * compound's last operator decides duplicates (UNION ALL keeps them, UNION, INTERSECT and
 * EXCEPT do not); otherwise DISTINCT right after the first top-level SELECT.
 */
export function resultShape(sql: string): ResultShape {
  const words = topLevelWords(sql);
  const ordered = words.some((word, i) => word === 'order' && words[i + 1] === 'by');
  const operators = words.flatMap((word, i) =>
    word === 'union' || word === 'intersect' || word === 'except' ? [words[i + 1] === 'all' ? 'all' : word] : [],
  );
  if (operators.length > 0) return { ordered, distinct: operators[operators.length - 1] !== 'all' };
  const select = words.indexOf('select');
  return { ordered, distinct: select >= 0 && words[select + 1] === 'distinct' };
}

/** The top-level tokens, lower-cased (words) or as `x` (anything else): depth-0 only. */
function topLevelWords(sql: string): string[] {
  const tokens = tokenize(sql);
  return topLevel(tokens).map((i) => (tokens[i].kind === 'word' ? tokens[i].text.toLowerCase() : 'x'));
}
