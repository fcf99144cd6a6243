/** The SEL formulation's runtime: SEL calls mapped back onto the SLOT runtime. */
export { executeSelSequence, selToSlotCall, SelToolSession } from './execute.js';
export { selToolSpec, selToolSpecs } from './specs.js';
export { NameAllocator, sanitizeToolName, TOOL_NAME_PATTERN } from './names.js';
export { getterShape, selShapeOf, type SelShape } from './bindings.js';
