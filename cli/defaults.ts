import { ConfigSchema } from '../config/schema.js';

/**
 * The config schema's defaults, for the help text. They are shown, not given to commander as
 * option defaults: a flag's value would then always be set and override the config file.
 */
export const CONFIG_DEFAULTS = ConfigSchema.parse({});

/** An option's help text with its default (a list as on the command line: comma-separated). */
export function withDefault(text: string, value: string | number | readonly string[]): string {
  // Not Array.isArray: it does not narrow a readonly array out of the union.
  return `${text} (default: ${typeof value === 'object' ? value.join(',') : value})`;
}
