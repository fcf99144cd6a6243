import { createHash } from 'node:crypto';

/** SEL tool names: `^[a-zA-Z0-9_-]{1,64}$` (docs/TOOLS.md, "SEL formulation"). */

export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;
const MAX = 64;

function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 8);
}

/**
 * Invalid characters become `_` (runs collapsed, none at the ends); a name over 64
 * characters keeps its head and ends with a hash of the whole original, so distinct long
 * names stay distinct.
 */
export function sanitizeToolName(name: string): string {
  const clean =
    name
      .replace(/[^a-zA-Z0-9_-]+/g, '_')
      .replace(/_{2,}/g, '_')
      .replace(/^_+|_+$/g, '') || 'tool';
  if (clean.length <= MAX) return clean;
  return `${clean.slice(0, MAX - 9).replace(/_+$/, '')}_${shortHash(name)}`;
}

/** Hands out valid, unique names: a collision gets `_2`, `_3`, ... (within 64 characters). */
export class NameAllocator {
  private readonly taken = new Set<string>();

  allocate(desired: string): string {
    const base = sanitizeToolName(desired);
    if (!this.taken.has(base)) {
      this.taken.add(base);
      return base;
    }
    for (let n = 2; ; n++) {
      const suffix = `_${n}`;
      const candidate = `${base.slice(0, MAX - suffix.length)}${suffix}`;
      if (!this.taken.has(candidate)) {
        this.taken.add(candidate);
        return candidate;
      }
    }
  }
}
