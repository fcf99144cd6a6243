import type { EmittedFile } from '../emit-artifact.js';
import { orderedFormulations } from '../../core/model.js';
import { emitDatabase } from '../formulations.js';
import { packageVersion } from '../../core/package-root.js';
import type { ItemResult } from '../samples.js';
import type { BarrierStage } from '../stage.js';

/**
 * emit: per database, once all its items are terminal: samples, tool specs and OpenAPI per
 * formulation. The run-level files (rejections, stats, manifest) are written by generate().
 */
export const emitStage: BarrierStage<{ items: readonly ItemResult[] }, EmittedFile[]> = {
  kind: 'barrier',
  name: 'emit',
  version: 1,
  run: ({ items }, ctx) =>
    emitDatabase({
      db: ctx.db,
      datasetName: ctx.datasetName,
      formulations: orderedFormulations(ctx.config.formulations),
      items,
      config: ctx.config,
      outDir: ctx.outDir,
      version: packageVersion(),
    }),
};
