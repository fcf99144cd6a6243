import type { SqlValue } from '../../core/model.js';
import { accept, reject, type Outcome } from '../../core/outcome.js';
import type { ArgumentValue, EndpointSpec } from '../../runtime/rest/spec.js';
import { transformOf, type TransformKind } from './transforms.js';

/**
 * A chain's question (issue 36): the first hop's question as its source asked it, then each
 * later hop as its endpoint's summary, told what it takes from the hop before. This is the
 * deterministic realizer (question-writer.ts has the LLM's); whatever wrote the question, the
 * checks VAKRA's raters apply by hand are applied here by rule:
 * - answer leakage: no value of the answer, and no value a link carries, is in the question;
 * - context sufficiency: every value the first hop is called with is in the question or its
 *   evidence (nothing else is given: the later hops take theirs from the hops before).
 */

export interface QuestionHop {
  endpoint: Pick<EndpointSpec, 'summary'>;
  /** Hops after the first: the field of the hop before it takes (snake_case), the parameter it fills, the transform. */
  link?: { field: string; param: string; transform: TransformKind };
}

export interface ChainQuestion {
  question: string;
  /** Each hop's own question: the source's for the first, the endpoint's summary for the others. */
  components: string[];
}

export function templateQuestion(firstQuestion: string, hops: readonly QuestionHop[]): ChainQuestion {
  const later = hops.slice(1).map((hop) => `Then ${linkPhrase(hop)}.`);
  return {
    question: [firstQuestion.trim(), ...later].join(' '),
    components: [firstQuestion.trim(), ...hops.slice(1).map((hop) => hop.endpoint.summary.trim())],
  };
}

/** What a later hop does, in words: `take <which value of which field> and use it as the <parameter> to <summary>`. */
export function linkPhrase(hop: QuestionHop): string {
  const { field, param, transform } = hop.link!;
  return `take ${transformOf(transform).phrase(words(field))} and use it as the ${words(param)} to ${midSentence(hop.endpoint.summary.trim().replace(/[.?!]+$/, ''))}`;
}

/**
 * A summary in the middle of a sentence: its first letter lower-case, and an article that
 * starts a column's description within it too (`Get A list of …, A list of …`); names keep theirs.
 */
const midSentence = (summary: string) =>
  lowerFirst(summary).replace(
    /(^|\bget |, )(A|An|The)(?= [a-z])/g,
    (_, before: string, article: string) => `${before}${article.toLowerCase()}`,
  );

/** The question leaks nothing: no value a link carries, no value of the answer. */
export function checkLeaks(
  question: string,
  bridges: readonly SqlValue[],
  answer: readonly (readonly SqlValue[])[],
): Outcome<true> {
  const bridge = bridges.find((value) => mentions(question, value));
  if (bridge !== undefined)
    return reject('leaks_bridge', `the question says ${JSON.stringify(bridge)}, a value one hop passes to the next`);
  const leaked = answer.flat().find((value) => mentions(question, value));
  if (leaked !== undefined)
    return reject('leaks_answer', `the question says ${JSON.stringify(leaked)}, part of its answer`);
  return accept(true);
}

/** The question (or its evidence) gives every value the first hop is called with. */
export function checkContext(
  question: string,
  evidence: string,
  firstArgs: Readonly<Record<string, ArgumentValue>>,
): Outcome<true> {
  const missing = Object.entries(firstArgs).find(
    ([, value]) => !mentions(question, value) && !mentions(evidence, value),
  );
  return missing
    ? reject(
        'insufficient_context',
        `the first hop's ${missing[0]} = ${JSON.stringify(missing[1])} is in neither the question nor its evidence`,
      )
    : accept(true);
}

/**
 * The value's text in the text, case-insensitively, anywhere (the strictest reading of "the
 * question contains the answer": `5` is in `2015`). NULL is never mentioned.
 */
export function mentions(text: string, value: SqlValue | ArgumentValue): boolean {
  if (value === null || typeof value === 'object') return false;
  const needle = String(value).toLowerCase();
  return needle.length > 0 && text.toLowerCase().includes(needle);
}

const words = (name: string) => name.replace(/_+/g, ' ').trim();
const lowerFirst = (text: string) => (text ? text[0].toLowerCase() + text.slice(1) : text);
