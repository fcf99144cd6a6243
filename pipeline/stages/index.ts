import { ownStages } from '../formulations.js';
import type { ItemStages } from '../runner/flow.js';
import { decomposeStage } from './decompose.js';
import { emitStage } from './emit.js';
import { executeStage } from './execute.js';
import { goldStage } from './gold.js';
import { ingestStage } from './ingest.js';
import { parseStage } from './parse.js';
import { verifyStage } from './verify.js';

/** The SLOT/SEL flow's item stages by their graph names (graph.ts; run by runner/flow.ts). */
export const ITEM_STAGES: ItemStages = {
  gold: goldStage,
  parse: parseStage,
  'slot.decompose': decomposeStage,
  execute: executeStage,
  verify: verifyStage,
  own: ownStages(),
};

export { decomposeStage, emitStage, executeStage, goldStage, ingestStage, parseStage, verifyStage };
