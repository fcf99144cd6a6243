import type { DatabaseInfo, SelBinding, SelSequence, ToolCall, ToolOutput } from '../../core/model.js';
import type { SqlExecutor } from '../sql/executor.js';
import { allowed, ToolError } from '../slot/errors.js';
import { executeSequence, ToolSession, type OutputPage, type RunOptions } from '../slot/execute.js';

/** SEL calls run as the SLOT calls they bind to: one runtime for both formulations. */

export function selToSlotCall(call: ToolCall, bindings: Record<string, SelBinding>): ToolCall {
  const binding = Object.prototype.hasOwnProperty.call(bindings, call.name) ? bindings[call.name] : undefined;
  if (!binding) {
    throw new ToolError(
      'unknown_tool',
      call.label,
      `unknown tool "${call.name}"; tools are ${allowed(Object.keys(bindings))}`,
    );
  }
  for (const name of Object.keys(binding.boundArguments)) {
    if (call.arguments && name in call.arguments) {
      throw new ToolError(
        'unknown_argument',
        call.label,
        `${call.name} (label "${call.label}"): unknown argument "${name}" (this tool fixes it)`,
      );
    }
  }
  return { name: binding.slotTool, arguments: { ...call.arguments, ...binding.boundArguments }, label: call.label };
}

export async function executeSelSequence(
  seq: SelSequence,
  db: DatabaseInfo,
  executor: SqlExecutor,
  opts: RunOptions,
): Promise<ToolOutput[]> {
  const calls = seq.calls.map((call) => selToSlotCall(call, seq.bindings));
  return executeSequence(
    { initialization: seq.initialization, calls, answerLabels: seq.answerLabels },
    db,
    executor,
    opts,
  );
}

/** Live SEL use: each call is mapped through `bindings` and run by a SLOT session. */
export class SelToolSession {
  private readonly session: ToolSession;

  constructor(
    db: DatabaseInfo,
    executor: SqlExecutor,
    opts: RunOptions,
    private readonly bindings: Record<string, SelBinding>,
  ) {
    this.session = new ToolSession(db, executor, opts);
  }

  /** `initialization`: as ToolSession.define's (false: a sequence's call, mapped through the bindings). */
  define(toolCall: ToolCall, initialization = toolCall.name === 'initialize_active_data'): Promise<void> {
    return initialization
      ? this.session.define(toolCall, true)
      : this.session.define(selToSlotCall(toolCall, this.bindings), false);
  }

  async call(toolCall: ToolCall, preview?: OutputPage): Promise<ToolOutput> {
    if (toolCall.name === 'initialize_active_data') return this.session.call(toolCall, preview);
    const slotCall = selToSlotCall(toolCall, this.bindings);
    try {
      return await this.session.call(slotCall, preview);
    } catch (error) {
      throw error instanceof ToolError ? inSelTerms(error, toolCall, this.bindings[toolCall.name]) : error;
    }
  }

  output(label: string, preview?: OutputPage): Promise<ToolOutput> {
    return this.session.output(label, preview);
  }

  answer(labels: readonly string[]): Promise<ToolOutput[]> {
    return this.session.answer(labels);
  }

  size(label: string): Promise<number> {
    return this.session.size(label);
  }

  labels(): string[] {
    return this.session.labels();
  }
}

/**
 * A SLOT tool's refusal as the SEL tool the caller called says it: the caller's tool name,
 * and the arguments it takes (those its binding fixes are not the caller's to give).
 */
function inSelTerms(error: ToolError, call: ToolCall, binding: SelBinding): ToolError {
  let message = error.message.replace(`${binding.slotTool} (label `, `${call.name} (label `);
  for (const name of Object.keys(binding.boundArguments)) {
    const quoted = JSON.stringify(name);
    message = message.replaceAll(`${quoted}, `, '').replaceAll(`, ${quoted}`, '');
  }
  return new ToolError(error.code, error.label, message);
}
