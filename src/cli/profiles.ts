import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/** A saved sign-in: where the server is, the workspace and its API key. */
export interface Profile {
  base_url: string;
  owner: string;
  key: string;
}

interface ConfigFile {
  profiles: Record<string, Profile>;
}

export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';
export const DEFAULT_PROFILE = 'default';

/** `$XDG_CONFIG_HOME/playline/config.json`, else `~/.config/playline/config.json`. */
export const configPath = (env: NodeJS.ProcessEnv = process.env): string =>
  join(env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME !== '' ? env.XDG_CONFIG_HOME : join(env.HOME ?? homedir(), '.config'), 'playline', 'config.json');

const readConfig = (path: string): ConfigFile => {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { profiles: {} };
    throw err;
  }
  try {
    const parsed = JSON.parse(text) as Partial<ConfigFile>;
    return { profiles: parsed.profiles ?? {} };
  } catch {
    throw new Error(`${path} is not valid JSON: fix or remove it, then run playline login again`);
  }
};

/** Writes the file readable by its owner only (0600, its directory 0700), replacing it whole. */
const writeConfig = (path: string, config: ConfigFile): void => {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temp, 0o600);
  renameSync(temp, path);
};

export function readProfile(name: string, env: NodeJS.ProcessEnv = process.env): Profile | undefined {
  return readConfig(configPath(env)).profiles[name];
}

export function saveProfile(name: string, profile: Profile, env: NodeJS.ProcessEnv = process.env): string {
  const path = configPath(env);
  const config = readConfig(path);
  config.profiles[name] = profile;
  writeConfig(path, config);
  return path;
}

/** Removes a profile; whether there was one. */
export function removeProfile(name: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const path = configPath(env);
  const config = readConfig(path);
  if (!(name in config.profiles)) return false;
  delete config.profiles[name];
  writeConfig(path, config);
  return true;
}

export interface ClientFlags {
  baseUrl?: string;
  owner?: string;
  key?: string;
  profile?: string;
}

export interface ClientCredentials {
  baseUrl: string;
  owner: string;
  key: string;
  /** Where the key came from, for messages (never the key itself): `--key`, `PLAYLINE_API_KEY`, or `profile "<name>" (<path>)`. */
  keySource: string;
}

let warnedOfOverride = false;

/**
 * Who calls and where, for client commands (api, sign, sign-playback...): each of base URL,
 * owner and key from its flag, else its variable (PLAYLINE_BASE_URL, PLAYLINE_API_KEY), else the
 * profile (--profile, PLAYLINE_PROFILE, or "default") that `playline login` saved.
 */
export function resolveCredentials(flags: ClientFlags, env: NodeJS.ProcessEnv = process.env, warn: (line: string) => void = (line) => process.stderr.write(line)): ClientCredentials {
  const profile = profileOf(flags, env);
  const profileName = flags.profile ?? env.PLAYLINE_PROFILE ?? DEFAULT_PROFILE;
  const owner = flags.owner ?? profile?.owner;
  const envKey = env.PLAYLINE_API_KEY !== undefined && env.PLAYLINE_API_KEY !== '' ? env.PLAYLINE_API_KEY : undefined;
  const key = flags.key ?? envKey ?? profile?.key;
  if (owner === undefined) throw new Error('No workspace: pass --owner, or sign in once with playline login');
  if (key === undefined || key === '') throw new Error('No API key: pass --key, set PLAYLINE_API_KEY, or sign in once with playline login');
  const keySource = flags.key !== undefined ? '--key' : envKey !== undefined ? 'PLAYLINE_API_KEY' : `profile "${profileName}" (${configPath(env)})`;
  // A stale PLAYLINE_API_KEY in the shell silently beat the saved sign-in: say so, once, without the secret.
  if (flags.key === undefined && envKey !== undefined && profile !== undefined && profile.key !== envKey && !warnedOfOverride) {
    warnedOfOverride = true;
    warn(`playline: signing with PLAYLINE_API_KEY from the environment, not the key saved in profile "${profileName}" (${configPath(env)}): they differ; unset PLAYLINE_API_KEY to use the profile\n`);
  }
  return { baseUrl: resolveBaseUrl(flags, env), owner, key, keySource };
}

/** The profile the flags or PLAYLINE_PROFILE name (an unknown name given explicitly is an error), or "default" if saved. */
function profileOf(flags: ClientFlags, env: NodeJS.ProcessEnv): Profile | undefined {
  const name = flags.profile ?? env.PLAYLINE_PROFILE ?? DEFAULT_PROFILE;
  const profile = readProfile(name, env);
  if (name !== DEFAULT_PROFILE && profile === undefined) throw new Error(`no profile "${name}" in ${configPath(env)}: run playline login --profile ${name}`);
  return profile;
}

/** Where the server is: --base-url, else PLAYLINE_BASE_URL, else the profile's, else http://127.0.0.1:8080. */
export function resolveBaseUrl(flags: ClientFlags, env: NodeJS.ProcessEnv = process.env): string {
  return (flags.baseUrl ?? env.PLAYLINE_BASE_URL ?? profileOf(flags, env)?.base_url ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
}
