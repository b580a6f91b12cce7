import { readFileSync } from 'node:fs';
import { DEFAULT_MAX_ASSETS_PER_WORKSPACE, FIRST_START_GRACE_S, RETENTION_MS, WINDOW_S } from '../stats-window.js';
import { EVENT_ARGS, NONE } from './redis-stats-codec.js';

/**
 * Numbers the Lua shares with the TypeScript side, declared once here: the script starts with
 * one `local NAME = value` line each, so the two stores can never disagree on a window or a
 * retention. (Redis-only numbers, such as key TTL margins, stay in the .lua files.)
 */
export const LUA_CONSTANTS = {
  NONE,
  WINDOW: WINDOW_S,
  RETENTION: RETENTION_MS,
  GRACE: FIRST_START_GRACE_S,
  MAX_SAFE: Number.MAX_SAFE_INTEGER,
  MAX_ASSETS: DEFAULT_MAX_ASSETS_PER_WORKSPACE,
  EVENT_ARGS,
} as const;

/** The three parts of the statistics script, in the order they are concatenated. */
export const LUA_FILES = ['stats-state.lua', 'stats-apply.lua', 'stats-modes.lua'] as const;

/** Read beside this module: from src/ under tsx, from dist/ once built (`npm run build` copies them). */
const readLua = (name: string): string => readFileSync(new URL(name, import.meta.url), 'utf8');

/** The statistics script (RedisStatsStore): the shared constants, then the .lua files. */
export const statsLuaSource = (): string => {
  const constants = Object.entries(LUA_CONSTANTS).map(([name, value]) => `local ${name} = ${value}`);
  return [`-- From stats-lua.ts (the TypeScript constants)`, ...constants, ...LUA_FILES.map(readLua)].join('\n');
};
