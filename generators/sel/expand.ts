import type { DatabaseInfo, SelBinding, SelSequence, SlotSequence, ToolCall, ToolPool } from '../../core/model.js';
import { accept, reject, type Outcome } from '../../core/outcome.js';
import { getterShape, selShapeOf, type SelShape } from '../../runtime/sel/bindings.js';
import { NameAllocator } from '../../runtime/sel/names.js';
import { ToolError } from '../../runtime/slot/errors.js';
import { keysForInitialization, keysForSequence } from '../../runtime/slot/specs.js';

/**
 * sel.expand: a SLOT sequence → its SEL form (docs/TOOLS.md, "SEL formulation"). Each
 * call's categorical argument moves into the tool name; the instance's tool universe is
 * the SEL tools the calls use, one getter per starting-table key and one per derived key
 * retrieved. Names are allocated in a fixed order (tools in first-use order, then the
 * starting keys' getters, then derived getters), so the same input gives the same names.
 * The sequence carries the universe as bindings over its key universe (starting keys, then
 * `derivedKeys`), not as specs: `selToolSpecs(bindings, keysForSequence(...), pool)` builds
 * those (pipeline/tool-registry.ts, once per distinct content).
 */
export function expandToSel(seq: SlotSequence, db: DatabaseInfo, pool: ToolPool): Outcome<SelSequence> {
  let keys;
  try {
    keys = keysForSequence(db, seq, pool);
  } catch (error) {
    if (error instanceof ToolError) return reject(`unsupported:invalid_slot:${error.code}`, error.message);
    throw error;
  }
  const shapes: SelShape[] = [];
  for (const call of seq.calls) {
    const shape = selShapeOf(call);
    if (!shape)
      return reject(
        `unsupported:sel_binding:${call.name}`,
        `call "${call.label}" (${call.name}) has no literal categorical argument to bind`,
      );
    shapes.push(shape);
  }

  const names = new NameAllocator();
  const bindings: Record<string, SelBinding> = {};
  const byShape = new Map<string, string>(); // desired name + binding → allocated name
  const nameOf = (shape: SelShape): string => {
    const id = JSON.stringify([shape.binding.slotTool, shape.binding.boundArguments]);
    let name = byShape.get(id);
    if (!name) {
      name = names.allocate(shape.desiredName);
      byShape.set(id, name);
      bindings[name] = shape.binding;
    }
    return name;
  };
  for (const shape of shapes) if (!shape.getterKey) nameOf(shape);
  const starting = keysForInitialization(db, seq.initialization).map((k) => k.key);
  for (const key of starting) nameOf(getterShape(key));
  for (const shape of shapes) if (shape.getterKey) nameOf(shape);

  const calls: ToolCall[] = seq.calls.map((call, i) => {
    const bound = Object.keys(shapes[i].binding.boundArguments);
    const args = Object.fromEntries(Object.entries(call.arguments).filter(([name]) => !bound.includes(name)));
    return { name: nameOf(shapes[i]), arguments: args, label: call.label };
  });
  return accept({
    initialization: seq.initialization,
    calls,
    answerLabels: seq.answerLabels,
    bindings,
    derivedKeys: keys.slice(starting.length),
    // What the decomposition relied on the data for: verified on the SEL sequence too.
    ...(seq.dataDependencies ? { dataDependencies: seq.dataDependencies } : {}),
  });
}
