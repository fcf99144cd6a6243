/** The verify stage's checks, in the order they run: format → execution → semantic. */
export { checkFormat, LABEL_PATTERN } from './format.js';
export { checkExecution, type ExecutionResult } from './execution.js';
export { checkSemantic } from './semantic.js';
export { answerRows, compareWithGold } from './compare.js';
