/**
 * Request bodies as UTF-8 bytes, the start a body shares with recent ones encoded once. An
 * evaluation's requests to a model begin alike — a database's system prompt, hundreds of KB
 * with its tools listed — and differ after it: encoding that start again for each request was
 * the largest piece of the main thread's work per request but the SDK's own. The bytes are
 * always exactly `Buffer.from(text, 'utf8')`'s.
 */

/** A shared start shorter than this is not worth remembering. */
const MIN_SHARED = 16 * 1024;

interface Start {
  text: string;
  bytes: Buffer;
}

export class SharedStartEncoder {
  /** Most recently used first. */
  private readonly starts: Start[] = [];
  private last = '';

  /** `kept`: starts remembered (a database's few system prompts, and the next database's). */
  constructor(private readonly kept = 8) {}

  encode(text: string): Buffer<ArrayBuffer> {
    const start = this.startOf(text);
    this.last = text;
    if (!start) return Buffer.from(text, 'utf8');
    return Buffer.concat([start.bytes, Buffer.from(text.slice(start.text.length), 'utf8')]);
  }

  /** A remembered start of `text` (one cut back to what `text` shares with it, if need be), or a new one shared with the last body. */
  private startOf(text: string): Start | undefined {
    for (const [i, start] of this.starts.entries()) {
      const shared = startsWith(text, start.text) ? start.text.length : boundary(text, sharedLength(text, start.text));
      if (shared < MIN_SHARED) continue;
      this.starts.splice(i, 1);
      // The bodies so far shared more than this one does (the same words opening two questions): keep what all share.
      const kept =
        shared === start.text.length
          ? start
          : {
              text: start.text.slice(0, shared),
              bytes: start.bytes.subarray(0, start.bytes.length - Buffer.byteLength(start.text.slice(shared), 'utf8')),
            };
      this.starts.unshift(kept);
      return kept;
    }
    const shared = boundary(text, sharedLength(text, this.last));
    if (shared < MIN_SHARED) return undefined;
    const fresh = { text: text.slice(0, shared), bytes: Buffer.from(text.slice(0, shared), 'utf8') };
    this.starts.unshift(fresh);
    this.starts.length = Math.min(this.starts.length, this.kept);
    return fresh;
  }
}

/** `text` starts with `start` (compared as one slice: String#startsWith goes a character at a time). */
function startsWith(text: string, start: string): boolean {
  return text.length >= start.length && text.slice(0, start.length) === start;
}

/** How many characters `a` and `b` share at their start: compared a slice at a time, narrowing down. */
function sharedLength(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  for (const step of [65536, 4096, 256, 16, 1])
    while (i + step <= n && a.slice(i, i + step) === b.slice(i, i + step)) i += step;
  return i;
}

/**
 * `length`, or one less where it would end between the two halves of a surrogate pair: the
 * halves encoded apart would be two replacement characters, not the character.
 */
function boundary(text: string, length: number): number {
  const last = length > 0 ? text.charCodeAt(length - 1) : 0;
  return last >= 0xd800 && last <= 0xdbff ? length - 1 : length;
}
