/** The SLOT tool runtime (docs/TOOLS.md): compilation to SQL, execution, tool specs. */
export { ToolError, type ToolErrorCode } from './errors.js';
export {
  compileSequence,
  SlotCompiler,
  type CompiledRelation,
  type CompiledSequence,
  type DerivedKey,
  type OutputKind,
} from './compiler.js';
export { executeSequence, materialize, runRelation, ToolSession, type RunOptions } from './execute.js';
export {
  keysForInitialization,
  keysForSequence,
  slotToolSpec,
  slotToolSpecs,
  toOpenApi,
  type KeyDoc,
} from './specs.js';
export { derivedKey, startingTableKeys } from './keys.js';
export { toolsOf, type SlotTool } from './catalog.js';
