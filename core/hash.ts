import { createHash } from 'node:crypto';

/**
 * Canonical JSON (object keys sorted, `undefined` members dropped as JSON.stringify does)
 * so that equal data always hashes equally, whatever the order its keys were built in.
 * `textOf` may give the text to write for an object instead: a `{ $ref }` standing for it
 * (run-store.ts), or its canonical JSON kept from an earlier key (generators/llm/cache.ts).
 * Written out by hand rather than as a JSON.stringify replacer (which copies every object
 * to sort it): keys of every item are computed on every run, warm ones included. Output is
 * exactly that of JSON.stringify on the key-sorted data.
 */
export function canonicalJson(value: unknown, textOf?: (value: object) => string | undefined): string {
  return write(value, textOf) ?? 'undefined';
}

function write(value: unknown, textOf: ((value: object) => string | undefined) | undefined): string | undefined {
  if (value !== null && typeof value === 'object') {
    const text = textOf?.(value);
    if (text !== undefined) return text;
    const json = (value as { toJSON?: unknown }).toJSON;
    if (typeof json === 'function') return write(json.call(value), textOf);
    if (Array.isArray(value))
      return primitives(value) ? JSON.stringify(value) : `[${value.map((v) => write(v, textOf) ?? 'null').join(',')}]`;
    const members: string[] = [];
    for (const key of Object.keys(value).sort()) {
      const member = write((value as Record<string, unknown>)[key], textOf);
      if (member !== undefined) members.push(`${JSON.stringify(key)}:${member}`);
    }
    return `{${members.join(',')}}`;
  }
  if (typeof value === 'bigint') return JSON.stringify(value.toString());
  return JSON.stringify(value);
}

/**
 * No object (nor bigint, nor anything JSON.stringify writes differently) in it: JSON.stringify
 * writes it as `write` would, at once (a gold answer's rows, thousands of them in a sample).
 */
function primitives(values: readonly unknown[]): boolean {
  for (const v of values)
    if (v !== null && typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') return false;
  return true;
}

export function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

export function hashJson(value: unknown): string {
  return sha256(canonicalJson(value));
}
