import type { EvalModel } from '../models/model.js';
import type { Predictions } from './read.js';

/**
 * Predictions as a model: each item is answered with the calls the agent made for it, as
 * one reply, so they run and are scored exactly as a model's direct reply is (names,
 * references, refusals, metrics). An item with no prediction gets an empty reply: not
 * completed, `instruction_alignment_failure`.
 */
export function predictionsModel(id: string, predictions: Predictions): EvalModel {
  return {
    id,
    family: 'gpt',
    readsPrompt: false,
    respond(turn) {
      const calls = predictions.calls.get(turn.item.id);
      return Promise.resolve({ content: calls ? JSON.stringify(calls) : '', cached: false });
    },
  };
}
