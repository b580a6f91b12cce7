import { readFileSync } from 'node:fs';

/**
 * The open-file limit of this process (soft RLIMIT_NOFILE), which every socket, file and pipe
 * counts against. Node has no API for it; on Linux `/proc/self/limits` shows it. Node raises its
 * own soft limit to the hard one when it starts, so what the file shows is what the process may
 * use. Elsewhere (or when the file cannot be read) the connection cap assumes this much: the usual
 * Linux soft limit, and far below what Node sets itself on macOS.
 */
export const FALLBACK_OPEN_FILE_LIMIT = 1024;

/** Linux's fs.nr_open default: no process holds more, even with an "unlimited" RLIMIT_NOFILE. */
const MOST_OPEN_FILES = 1_048_576;

export const PROC_LIMITS_PATH = '/proc/self/limits';

/** The soft "Max open files" of a `/proc/<pid>/limits` text, or undefined when it has none. */
export function parseOpenFileLimit(text: string): number | undefined {
  const soft = /^Max open files\s+(\S+)\s+\S+/m.exec(text)?.[1];
  if (soft === 'unlimited') return MOST_OPEN_FILES;
  if (soft === undefined || !/^\d+$/.test(soft)) return undefined;
  return Number(soft);
}

export interface OpenFileLimit {
  limit: number;
  /** Where it was read, or `default`: FALLBACK_OPEN_FILE_LIMIT, assumed. */
  source: string;
}

export function readOpenFileLimit(path = PROC_LIMITS_PATH): OpenFileLimit {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return { limit: FALLBACK_OPEN_FILE_LIMIT, source: 'default' };
  }
  const limit = parseOpenFileLimit(text);
  return limit === undefined ? { limit: FALLBACK_OPEN_FILE_LIMIT, source: 'default' } : { limit, source: path };
}

/** Descriptors a connection may hold: its socket, and a media file it sends or receives. */
const DESCRIPTORS_PER_CONNECTION = 2;

export interface ConnectionCap {
  /** Open connections the instance accepts at once. */
  cap: number;
  /** The most the open-file limit allows: (limit - reserve) / 2, at least 1. */
  ceiling: number;
  /** The setting asked for more than the ceiling and was lowered to it. */
  clamped: boolean;
}

/**
 * The instance-wide connection cap: what the setting asks for, or the ceiling the open-file limit
 * allows when it is unset or asks for more (clamped: the start logs a warning rather than refuse,
 * so a host with a lower limit still serves). The ceiling leaves `reserve` descriptors to the
 * database, logs, media processes and their pipes, the RTMP ingest fronts and outbound requests,
 * and counts two for each connection, which may be streaming a media file.
 */
export function connectionCapOf(options: { limit: number; reserve: number; setting?: number | undefined }): ConnectionCap {
  const ceiling = Math.max(1, Math.floor((options.limit - options.reserve) / DESCRIPTORS_PER_CONNECTION));
  const { setting } = options;
  if (setting === undefined) return { cap: ceiling, ceiling, clamped: false };
  return setting > ceiling ? { cap: ceiling, ceiling, clamped: true } : { cap: setting, ceiling, clamped: false };
}
