import { LruMap } from '../../core/lru.js';

/**
 * A request body (plain JSON data) as the UTF-8 bytes of its JSON.stringify text, each long
 * string's part of it (escaped, then encoded) made once and reused. An evaluation's requests
 * to a model carry the same system prompt (a database's tools listed in it: hundreds of KB for
 * SLOT); an SDK writing the JSON of it again and encoding the result again, per request, was
 * the largest piece of the main thread's work per request (~3 ms of ~17 on BIRD dev SLOT).
 * The bytes are always exactly `Buffer.from(JSON.stringify(body), 'utf8')`'s: with no
 * indentation a string's JSON does not depend on where it stands, and JSON.stringify's text is
 * well-formed UTF-16 (a lone surrogate is written escaped), so its pieces encode apart as whole.
 */

/** A string shorter than this is written out each time. */
const LONG = 16 * 1024;
/**
 * What a long string is written as while the rest of the body is: control characters, which
 * JSON escapes, so its text cannot come from any other string value; a key spelled so is caught.
 */
const STAND_IN = '\u0000nl2api long string\u0000';
const STAND_IN_JSON = JSON.stringify(STAND_IN);

export class JsonBodyEncoder {
  private readonly parts: LruMap<string, Buffer<ArrayBuffer>>;

  /** `kept`: long strings remembered (a database's few system prompts, and the next database's). */
  constructor(kept = 8) {
    this.parts = new LruMap(kept);
  }

  encode(body: object): Buffer<ArrayBuffer> {
    const long: string[] = [];
    const text = JSON.stringify(body, (_key, value: unknown) => {
      if (typeof value !== 'string' || (value.length < LONG && value !== STAND_IN)) return value;
      long.push(value);
      return STAND_IN;
    });
    if (long.length === 0) return Buffer.from(text, 'utf8');
    const pieces = text.split(STAND_IN_JSON);
    // A key spelled as the stand-in: its text split the body too.
    if (pieces.length !== long.length + 1) return Buffer.from(JSON.stringify(body), 'utf8');
    const chunks = [Buffer.from(pieces[0], 'utf8')];
    long.forEach((value, i) => chunks.push(this.partOf(value), Buffer.from(pieces[i + 1], 'utf8')));
    return Buffer.concat(chunks);
  }

  private partOf(value: string): Buffer<ArrayBuffer> {
    return this.parts.getOrSet(value, () => Buffer.from(JSON.stringify(value), 'utf8'));
  }
}
