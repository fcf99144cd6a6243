import { plannedTurn, type EvalModel } from '../models/model.js';
import type { Predictions } from './read.js';

/**
 * Predictions as a model: each item is answered with the calls the agent made for it, so
 * they run and are scored exactly as a model's replies are (names, references, metrics).
 * Direct: all of them as one reply, the first failure ends the run (what a sequence is
 * held to). ReAct: one per turn, a failed call an observation the agent went past (what an
 * agent's recorded trajectory is); the answer is then the outputs no later call used. An item
 * with no prediction made no call: not completed, `instruction_alignment_failure`.
 */
export function predictionsModel(id: string, predictions: Predictions): EvalModel {
  return {
    id,
    family: 'gpt',
    readsPrompt: false,
    respond(turn) {
      const calls = predictions.calls.get(turn.item.id) ?? [];
      const content =
        turn.mode === 'react'
          ? plannedTurn(calls, turn, () => '(the outputs of the calls above)')
          : JSON.stringify(calls);
      return Promise.resolve({ content, cached: false });
    },
  };
}
