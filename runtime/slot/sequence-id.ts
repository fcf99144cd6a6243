import type { DatabaseInfo, SlotSequence, ToolCall, ToolPool } from '../../core/model.js';

/**
 * What a sequence's compilation depends on, as a memo key: the database, the pool and the
 * calls. A call's arguments are listed by name: a SEL call mapped back onto its SLOT call
 * carries its bound arguments last (runtime/sel/execute.ts), and compiling reads arguments by
 * name, so the two share one compilation. (Their values are the SLOT call's own, in its order.)
 */
export function compiledSequenceId(
  db: DatabaseInfo,
  pool: ToolPool,
  seq: Pick<SlotSequence, 'initialization' | 'calls'>,
): string {
  return JSON.stringify([db.fingerprint, db.path, pool, seq.initialization.map(callId), seq.calls.map(callId)]);
}

function callId({ name, label, arguments: args }: ToolCall): unknown[] {
  return [
    name,
    label,
    ...Object.keys(args)
      .sort()
      .map((argument) => [argument, args[argument]]),
  ];
}
