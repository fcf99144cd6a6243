import type { ItemStages } from '../runner/flow.js';
import { decomposeStage } from './decompose.js';
import { emitStage } from './emit.js';
import { executeStage } from './execute.js';
import { expandStage } from './expand.js';
import { goldStage } from './gold.js';
import { ingestStage } from './ingest.js';
import { parseStage } from './parse.js';
import { verifyStage } from './verify.js';

/** The stage registry: every stage by its DESIGN.md name, and the item stages the flow runs. */
export const STAGES = {
  ingest: ingestStage,
  gold: goldStage,
  parse: parseStage,
  'slot.decompose': decomposeStage,
  'sel.expand': expandStage,
  execute: executeStage,
  verify: verifyStage,
  emit: emitStage,
} as const;

export const ITEM_STAGES: ItemStages = {
  gold: goldStage,
  parse: parseStage as ItemStages['parse'],
  decompose: decomposeStage as ItemStages['decompose'],
  expand: expandStage,
  execute: executeStage,
  verify: verifyStage,
};

export { decomposeStage, emitStage, executeStage, expandStage, goldStage, ingestStage, parseStage, verifyStage };
