import { createHash } from 'node:crypto';

/**
 * Canonical JSON (object keys sorted, `undefined` members dropped as JSON.stringify does)
 * so that equal data always hashes equally, whatever the order its keys were built in.
 * `refOf` may replace an object by a `{ $ref }` standing for it (see run-store.ts).
 */
export function canonicalJson(value: unknown, refOf?: (value: object) => string | undefined): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (refOf && v && typeof v === 'object') {
      const ref = refOf(v);
      if (ref !== undefined) return { $ref: ref };
    }
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      const sorted: Record<string, unknown> = {};
      for (const k of Object.keys(v as object).sort()) sorted[k] = (v as Record<string, unknown>)[k];
      return sorted;
    }
    if (typeof v === 'bigint') return v.toString();
    return v;
  });
}

export function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

export function hashJson(value: unknown): string {
  return sha256(canonicalJson(value));
}
