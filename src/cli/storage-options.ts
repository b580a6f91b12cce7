import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { loadConfig, settings, type Config, type ConfigKey } from '../platform/config.js';
import { SQLITE_FILE } from '../platform/db/sqlite-file.js';
import type { Runtime, RuntimeOverrides } from '../runtime.js';

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

export interface DataCommandOptions {
  /**
   * The command may start a new data directory (`workspaces create`). Every other command
   * refuses a directory without Playline data: a mistyped --data-dir must not quietly get a new
   * empty database (and a new secret key) that then answers "(none)".
   */
  mayCreate?: boolean;
  overrides?: RuntimeOverrides;
}

/** Throws when the embedded data directory of `config` holds no Playline database. */
export function requirePlaylineData(config: Config): void {
  if (config.databaseUrl !== undefined) return;
  if (!existsSync(join(config.dataDir, SQLITE_FILE))) {
    throw new Error(`no Playline data in ${resolve(config.dataDir)} (no ${SQLITE_FILE}): check --data-dir or PLAYLINE_DATA_DIR`);
  }
}

/** Opens the same storage the server uses (its data dir or database), runs `fn`, closes. */
export async function withRuntime<T>(opts: Record<string, unknown>, fn: (runtime: Runtime) => Promise<T>, options: DataCommandOptions = {}): Promise<T> {
  const config = configFrom(opts);
  if (options.mayCreate !== true) requirePlaylineData(config);
  // Loaded here, not at the top: every `playline` command imports this file, and the runtime (the
  // database drivers, every module's services) is most of the CLI's start-up time.
  const { createRuntime } = await import('../runtime.js');
  const runtime = await createRuntime(config, options.overrides);
  try {
    return await fn(runtime);
  } finally {
    await runtime.close();
  }
}
