import { z } from 'zod';
import type { LlmClient } from './client.js';
import { classifyLlmError, type LlmFailureCategory } from './errors.js';
import { repairJson } from './json-repair.js';
import type { LlmMessage } from './messages.js';

export type StructuredFailure = {
  ok: false;
  category: LlmFailureCategory;
  message: string;
  /** The model's reply, when there was one (for the feedback and the record). */
  raw?: string;
};

/** Assignable to the pipeline's Outcome<T>. */
export type StructuredResult<T> =
  { ok: true; value: T; raw: string; repaired: boolean; cached: boolean } | StructuredFailure;

/**
 * Asks for a JSON reply and validates it with `schema`. A reply that is not JSON is
 * repaired once (json-repair.ts); one that still does not parse is `llm:invalid_json`, one
 * that parses but does not match is `llm:schema` with zod's message. Call failures after
 * the client's retries come back as their category (`llm:timeout`, `llm:rate_limited`, …).
 * Use `failureFeedback` to tell the next attempt what went wrong.
 */
export async function completeStructured<T>(
  client: LlmClient,
  messages: readonly LlmMessage[],
  schema: z.ZodType<T>,
): Promise<StructuredResult<T>> {
  let reply;
  try {
    reply = await client.complete(messages);
  } catch (thrown) {
    const error = classifyLlmError(thrown);
    if (!error) throw thrown;
    return { ok: false, category: error.category, message: error.message };
  }
  const result = parseStructured(reply.text, schema);
  return result.ok ? { ...result, cached: reply.cached } : result;
}

/** The reply-parsing half of completeStructured, pure. */
export function parseStructured<T>(raw: string, schema: z.ZodType<T>): StructuredResult<T> {
  let json = parseJson(raw);
  let repaired = false;
  if (json === undefined) {
    const candidate = repairJson(raw);
    json = candidate === undefined ? undefined : parseJson(candidate);
    repaired = true;
  }
  if (json === undefined)
    return { ok: false, category: 'llm:invalid_json', message: 'the reply is not valid JSON, even after repair', raw };
  const parsed = schema.safeParse(json.value);
  if (!parsed.success) return { ok: false, category: 'llm:schema', message: z.prettifyError(parsed.error), raw };
  return { ok: true, value: parsed.data, raw, repaired, cached: false };
}

function parseJson(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) };
  } catch {
    return undefined;
  }
}

/** A reply that is not JSON or not of the schema is asked for once more, told why; a call failure is not. */
export async function completeWithOneRetry<T>(
  client: LlmClient,
  messages: readonly LlmMessage[],
  schema: z.ZodType<T>,
): Promise<StructuredResult<T>> {
  const first = await completeStructured(client, messages, schema);
  if (first.ok || (first.category !== 'llm:invalid_json' && first.category !== 'llm:schema')) return first;
  return completeStructured(client, [...messages, ...failureFeedback(first)], schema);
}

/** A judge's reply: `{"verdict": "yes" | "no", "rationale": "…"}`. */
export const YesNoVerdict = z.object({
  verdict: z
    .string()
    .trim()
    .toLowerCase()
    .pipe(z.enum(['yes', 'no'])),
  rationale: z.string().trim(),
});

/**
 * Messages to append for the next attempt: the rejected reply (if any) and a user message
 * saying why it was rejected.
 */
export function failureFeedback(failure: StructuredFailure): LlmMessage[] {
  const why =
    failure.category === 'llm:invalid_json'
      ? 'it was not valid JSON'
      : failure.category === 'llm:schema'
        ? `it did not match the required structure:\n${failure.message}`
        : `the request failed (${failure.category}: ${failure.message})`;
  const retry: LlmMessage = {
    role: 'user',
    content: `Your previous reply was rejected because ${why}.\nReply again with a single JSON value only, no prose and no code fences.`,
  };
  return failure.raw === undefined ? [retry] : [{ role: 'assistant', content: failure.raw }, retry];
}
