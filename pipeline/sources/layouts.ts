import { birdLayout } from './bird.js';
import { jsonlLayout } from './jsonl.js';

/**
 * The source layouts, in order of preference (a folder holding both a BIRD question file and
 * a `.jsonl` is BIRD): the single list that loadSource detects layouts with, that its errors
 * describe, and that `LoadedSource.layout` is typed by. A new layout is its module (a
 * SourceLayout, records.ts) and a line here.
 */
export const SOURCES = [birdLayout, jsonlLayout] as const;

export type SourceLayoutName = (typeof SOURCES)[number]['name'];
