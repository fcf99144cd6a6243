/**
 * Errors of a tool call, worded for the model that made it: each names the offending
 * argument and, where there is a closed set, the allowed values.
 */

export type ToolErrorCode =
  | 'unknown_tool'
  | 'not_in_pool'
  | 'unknown_argument'
  | 'missing_argument'
  | 'wrong_type'
  | 'bad_value'
  | 'unknown_key'
  | 'not_grouped'
  | 'bad_reference'
  | 'duplicate_label';

export class ToolError extends Error {
  override name = 'ToolError';
  constructor(
    readonly code: ToolErrorCode,
    /** Label of the call that failed. */
    readonly label: string,
    message: string,
  ) {
    super(message);
  }
}

/** Lists allowed values for an error message, shortened when there are many. */
export function allowed(values: readonly string[], max = 40): string {
  const shown = values.slice(0, max).map((v) => JSON.stringify(v));
  return values.length > max ? `${shown.join(', ')}, ... (${values.length} in all)` : shown.join(', ');
}
