import { birdLayout } from './bird.js';
import { jsonlLayout } from './jsonl.js';
import { liveApiBenchLayout } from './live-api-bench.js';

/**
 * The source layouts, in order of preference (a folder holding both a BIRD question file and
 * a `.jsonl` is BIRD): the single list that loadSource detects layouts with, that its errors
 * describe, and that `LoadedSource.layout` is typed by. A new layout is its module (a
 * SourceLayout, records.ts) and a line here.
 */
// Live API-Bench first: BIRD takes any folder holding a .json, and a Live API-Bench folder is
// one; its own detection reads the files and takes only arrays of its samples.
export const SOURCES = [liveApiBenchLayout, birdLayout, jsonlLayout] as const;

export type SourceLayoutName = (typeof SOURCES)[number]['name'];
