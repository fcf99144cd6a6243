import { selToolSpec } from '../runtime/sel/specs.js';
import { toolsOf } from '../runtime/slot/catalog.js';
import { keysForInitialization, slotToolSpec } from '../runtime/slot/specs.js';
import type { DatabaseInfo, KeyDescription, SelSequence, ToolPool, ToolSpec } from '../core/model.js';

/**
 * Tool specs of one database and tool pool, each built once per distinct content and then
 * shared: a SLOT spec per (key universe, tool), a SEL spec per (key universe, name, binding).
 * Sequences carry only bindings and derived keys (core/model.ts); the database supplies the
 * starting keys. Shared objects let the format check reuse its compiled validators without
 * rehashing each spec, and a spec is always built from the same data the same way, so
 * output stays deterministic.
 */
export class ToolRegistry {
  private readonly universes = new Map<string, { id: number; keys: KeyDescription[] }>();
  private readonly universeOfKeys = new WeakMap<KeyDescription[], { id: number; keys: KeyDescription[] }>();
  private readonly universeOfSequence = new WeakMap<SelSequence, { id: number; keys: KeyDescription[] }>();
  private readonly slotSpecs = new Map<string, ToolSpec>();
  private readonly selSpecs = new Map<string, ToolSpec>();

  constructor(
    readonly db: DatabaseInfo,
    readonly pool: ToolPool,
  ) {}

  /** The named tools of the SLOT pool, specified over a key universe (names not in the pool are left out). */
  slotTools(keys: KeyDescription[], names: ReadonlySet<string>): ToolSpec[] {
    let universe = this.universeOfKeys.get(keys);
    if (!universe) {
      universe = this.universe(JSON.stringify(keys), () => keys);
      this.universeOfKeys.set(keys, universe);
    }
    // The universe's own keys: its specs then share one key list (runtime/slot/specs.ts).
    const { id, keys: universeKeys } = universe;
    return toolsOf(this.pool)
      .filter((tool) => names.has(tool))
      .map((tool) => {
        const specId = `${id}\0${tool}`;
        let spec = this.slotSpecs.get(specId);
        if (!spec) this.slotSpecs.set(specId, (spec = slotToolSpec(tool, universeKeys, this.pool)));
        return spec;
      });
  }

  /** The spec of one tool of a SEL sequence's universe. */
  selTool(seq: SelSequence, name: string): ToolSpec {
    const universe = this.selUniverse(seq);
    const binding = seq.bindings[name];
    const id = `${universe.id}\0${name}\0${JSON.stringify(binding)}`;
    let spec = this.selSpecs.get(id);
    if (!spec) this.selSpecs.set(id, (spec = selToolSpec(name, binding, universe.keys, this.pool)));
    return spec;
  }

  /** Starting keys of the sequence's initialization, then its derived keys (as sel.expand saw them). */
  private selUniverse(seq: SelSequence): { id: number; keys: KeyDescription[] } {
    let universe = this.universeOfSequence.get(seq);
    if (!universe) {
      universe = this.universe(JSON.stringify([seq.initialization, seq.derivedKeys]), () => [
        ...keysForInitialization(this.db, seq.initialization),
        ...seq.derivedKeys,
      ]);
      this.universeOfSequence.set(seq, universe);
    }
    return universe;
  }

  private universe(id: string, keys: () => KeyDescription[]): { id: number; keys: KeyDescription[] } {
    let universe = this.universes.get(id);
    if (!universe) this.universes.set(id, (universe = { id: this.universes.size, keys: keys() }));
    return universe;
  }
}

const registries = new WeakMap<DatabaseInfo, Map<ToolPool, ToolRegistry>>();

/** The registry of a database (lives as long as its DatabaseInfo) and pool. */
export function toolRegistry(db: DatabaseInfo, pool: ToolPool): ToolRegistry {
  let byPool = registries.get(db);
  if (!byPool) registries.set(db, (byPool = new Map<ToolPool, ToolRegistry>()));
  let registry = byPool.get(pool);
  if (!registry) byPool.set(pool, (registry = new ToolRegistry(db, pool)));
  return registry;
}

/** Lets go of a database's specs (and so of their validators): a run that has written the database's outputs. */
export function releaseToolRegistries(db: DatabaseInfo): void {
  registries.delete(db);
}
