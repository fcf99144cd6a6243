import { readFile } from 'node:fs/promises';
import { UserFacingError } from '../core/errors.js';
import path from 'node:path';
import { z } from 'zod';
import { ConfigSchema, type Config, type ConfigInput } from './schema.js';

/** A config file or flag that cannot be used: the CLI prints the message and exits 1. */
export class ConfigError extends UserFacingError {
  override name = 'ConfigError';
}

/**
 * Resolves the run config: schema defaults < the JSON config file < CLI flags
 * (flags that were not given are absent from `flags`, so they override nothing).
 */
export async function loadConfig(options: { file?: string; flags?: ConfigInput } = {}): Promise<Config> {
  const fromFile = options.file ? await readConfigFile(options.file) : {};
  return parseConfig(mergeConfig(fromFile, options.flags ?? {}), options.file ?? 'flags');
}

export function parseConfig(input: unknown, origin = 'config'): Config {
  const result = ConfigSchema.safeParse(input);
  if (!result.success) throw new ConfigError(`invalid ${origin}:\n${z.prettifyError(result.error)}`);
  return result.data;
}

/** The effective cache directory. */
export function cacheDirOf(config: Config): string {
  return path.resolve(config.cacheDir ?? path.join(config.out, '.cache'));
}

async function readConfigFile(file: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`cannot read config file ${file}: ${(error as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`config file ${file} is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(`config file ${file} must hold a JSON object`);
  }
  // Relative paths in the file are relative to the file, not to the working directory.
  const dir = path.dirname(path.resolve(file));
  const config = { ...(parsed as Record<string, unknown>) };
  for (const key of ['source', 'out', 'cacheDir'] as const) {
    if (typeof config[key] === 'string') config[key] = path.resolve(dir, config[key]);
  }
  return config;
}

/** Shallow merge, one level deep for nested objects (`backoff`); undefined never overrides. */
function mergeConfig(base: Record<string, unknown>, override: Record<string, unknown>): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(override)) {
    if (value === undefined) continue;
    const current = merged[key];
    merged[key] = isPlainObject(current) && isPlainObject(value) ? { ...current, ...value } : value;
  }
  return merged;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
