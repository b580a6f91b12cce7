import type { Command } from 'commander';
import { loadConfig, settings, type Config, type ConfigKey } from '../platform/config.js';
import { createRuntime, type Runtime } from '../runtime.js';

const camel = (flag: string) => flag.replace(/^--/, '').replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());

/** Adds one option per setting (all of them for `serve`, the storage ones for data commands). */
export function addSettingOptions(command: Command, keys?: ConfigKey[]): Command {
  for (const s of settings) {
    if (keys && !keys.includes(s.key)) continue;
    const hint = s.default !== undefined && s.default !== '' ? ` (default: ${String(s.default)})` : '';
    command.option(`${s.flag} <value>`, `${s.description}; env ${s.env}${hint}`);
  }
  return command;
}

export const storageKeys: ConfigKey[] = ['dataDir', 'databaseUrl', 'redisUrl', 'redisPrefix', 'secretKey'];

/** Config from the environment overridden by the command's flags. */
export function configFrom(opts: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): Config {
  const flags: Partial<Record<ConfigKey, unknown>> = {};
  for (const s of settings) {
    const value = opts[camel(s.flag)];
    if (value !== undefined) flags[s.key] = value;
  }
  return loadConfig(env, flags);
}

/** Opens the same storage the server uses (its data dir or database), runs `fn`, closes. */
export async function withRuntime<T>(opts: Record<string, unknown>, fn: (runtime: Runtime) => Promise<T>): Promise<T> {
  const runtime = await createRuntime(configFrom(opts));
  try {
    return await fn(runtime);
  } finally {
    await runtime.close();
  }
}
