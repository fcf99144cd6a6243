import { FORMULATIONS } from '../../core/model.js';
import { funnelOf, pathStages, PIPELINE_GRAPH, SHARED_STAGES, STAGE_NAMES } from '../../pipeline/graph.js';
import { STAGE_GROUPS, STAGE_QUEUES } from '../../pipeline/queue/jobs.js';
import { ITEM_STAGES } from '../../pipeline/stages/index.js';
import { restCallStage } from '../../pipeline/stages/rest-call.js';
import { dedupStage } from '../../pipeline/stages/rest-dedup.js';
import { synthesizeStage } from '../../pipeline/stages/rest-synthesize.js';

describe('the pipeline graph', () => {
  it('names each stage once and lists it after every stage it consumes', () => {
    expect(new Set(STAGE_NAMES).size).toBe(STAGE_NAMES.length);
    PIPELINE_GRAPH.forEach((stage, i) => {
      for (const upstream of stage.consumes) expect(STAGE_NAMES.indexOf(upstream as never)).toBeLessThan(i);
    });
  });

  it('gives each formulation its funnel from ingest to verify', () => {
    expect(Object.fromEntries(FORMULATIONS.map((f) => [f, funnelOf(f)]))).toEqual({
      slot: ['ingest', 'gold', 'parse', 'slot.decompose', 'execute', 'verify'],
      sel: ['ingest', 'gold', 'parse', 'slot.decompose', 'sel.expand', 'execute', 'verify'],
      rest: ['ingest', 'gold', 'rest.synthesize', 'rest.dedup', 'execute', 'verify'],
      // A chain's first hop is a verified REST sample.
      chain: ['ingest', 'gold', 'rest.synthesize', 'rest.dedup', 'execute', 'verify', 'chain.compose'],
    });
  });

  it('splits the sequence flow into the shared stages and each formulation path', () => {
    expect(SHARED_STAGES).toEqual(['gold', 'parse', 'slot.decompose']);
    expect(pathStages('slot')).toEqual(['execute', 'verify']);
    expect(pathStages('sel')).toEqual(['sel.expand', 'execute', 'verify']);
  });

  it('has a stage object, named as in the graph, for every stage of the SLOT/SEL flow', () => {
    const flow = new Set([...SHARED_STAGES, ...pathStages('slot'), ...pathStages('sel')]);
    const { own, ...common } = ITEM_STAGES;
    const byName = { ...common, ...own };
    expect(Object.keys(byName).sort()).toEqual([...flow].sort());
    for (const [name, stage] of Object.entries(byName)) expect(stage.name).toBe(name);
  });

  it('has a stage object of the graph kind for every REST stage after gold (execute and verify are one)', () => {
    const kinds = Object.fromEntries(PIPELINE_GRAPH.map((stage) => [stage.name, stage.kind]));
    expect([synthesizeStage, dedupStage, restCallStage].map((stage) => [stage.name, stage.kind])).toEqual([
      ['rest.synthesize', kinds['rest.synthesize']],
      ['rest.dedup', kinds['rest.dedup']],
      ['verify', 'item'],
    ]);
    expect(kinds.verify).toBe('path');
    expect(pathStages('rest')).toEqual(['rest.synthesize', 'rest.dedup', 'execute', 'verify']);
  });

  it('derives the queue topology: one job group per REST-only stage, REST calls, the item flow, the emit gate', () => {
    expect(STAGE_GROUPS).toEqual(['item', 'rest.synthesize', 'rest.dedup', 'rest.verify', 'emit', 'run', 'eval']);
    expect(new Set(Object.values(STAGE_QUEUES)).size).toBe(STAGE_GROUPS.length);
    expect(STAGE_QUEUES['rest.synthesize']).toBe('rest-synthesize');
  });
});
