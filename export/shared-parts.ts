import { z } from 'zod';
import { perObject } from '../core/per-object.js';
import type { Piece } from './writer.js';

/**
 * The parts many lines of an export share, built, checked and serialized once each rather than
 * once per line. A tool spec is most of every SLOT or SEL line (its key enums and their
 * descriptions: tens of kilobytes), and the samples of a database offer the very same spec
 * objects (`ownTools` keeps one object per narrowing), so a memo keyed on the object serves
 * every line that offers it: a line is spliced from its parts' bytes (`listPieces`, writer.ts).
 */

/**
 * `schema`, checked once per object: a line is still checked whole, its shared parts by the
 * verdict they got the first time. For schemas without transforms (the value is kept as it is).
 */
export function checkedOncePerObject<T extends z.ZodType>(schema: T): z.ZodType<z.output<T>> {
  const verdict = perObject((value: object) => {
    const checked = schema.safeParse(value);
    return { message: checked.success ? undefined : checked.error.message };
  });
  return z.custom<z.output<T>>().superRefine((value, ctx) => {
    const message =
      value !== null && typeof value === 'object' ? verdict(value).message : failure(schema.safeParse(value));
    if (message !== undefined) ctx.addIssue({ code: 'custom', message });
  });
}

const failure = (checked: { success: boolean; error?: { message: string } }) =>
  checked.success ? undefined : checked.error?.message;

/**
 * `build` once per distinct text, for parts that are strings (a tool list as one JSON string,
 * a system prompt): they are the same string objects on every line, so found at once.
 */
export function perText<V>(build: (text: string) => V): (text: string) => V {
  const cache = new Map<string, V>();
  return (text) => {
    if (cache.has(text)) return cache.get(text)!;
    const value = build(text);
    if (cache.size >= MAX_TEXTS) cache.clear();
    cache.set(text, value);
    return value;
  };
}

/** Bounds the texts kept (a database's samples come together: its distinct tool lists are far fewer). */
const MAX_TEXTS = 256;

/** Bytes encoded once, for a part's text. */
export const bytesOf = (text: string): Uint8Array => Buffer.from(text);

/** A text as it stands inside a JSON string (escaped, unquoted). */
export const escapedText = (text: string): string => JSON.stringify(text).slice(1, -1);

/** A part's text as it stands inside a JSON string, encoded. */
export const escapedBytesOf = (text: string): Uint8Array => bytesOf(escapedText(text));

const COMMA = Buffer.from(',');

/** A JSON list written from its items' bytes: `open`, the items comma-separated, `close`. */
export function listPieces(open: string, items: readonly Uint8Array[], close: string): Piece[] {
  const pieces: Piece[] = [open];
  items.forEach((item, i) => {
    if (i > 0) pieces.push(COMMA);
    pieces.push(item);
  });
  pieces.push(close);
  return pieces;
}
