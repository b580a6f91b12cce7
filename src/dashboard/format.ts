import { playbackErrorMeaning } from '../modules/vod-stats/playback-error-codes.js';
import { ApiProblem } from './api/client.js';
import type { Stats } from './api/types.js';

const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const decimal = new Intl.NumberFormat('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 });

export const count = (n: number): string => integer.format(n);

/** Bytes in binary units (B, KiB, MiB, GiB, TiB). */
export function bytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${integer.format(n)} B` : `${decimal.format(value)} ${units[unit]}`;
}

export const millis = (n: number | null | undefined): string => (n === null || n === undefined ? '—' : `${decimal.format(n)} ms`);

/** `2026-11-21 10:04:05 UTC` (the API's times are UTC). */
export const utcTime = (unixMs: number): string => `${new Date(unixMs).toISOString().slice(0, 19).replace('T', ' ')} UTC`;

/** Playback sessions with an error, over every code. */
export const errorSessions = (stats: Stats): number => Object.values(stats.errors).reduce((sum, n) => sum + n, 0);

/** The spec's meaning of a playback error code (unknown codes are counted as 999). */
export const errorMeaning = (code: string | number): string => playbackErrorMeaning[Number(code)] ?? 'Unknown code';

/** Error codes of a stats body, most sessions first. */
export const errorRows = (stats: Stats): { code: string; sessions: number; meaning: string }[] =>
  Object.entries(stats.errors)
    .map(([code, sessions]) => ({ code, sessions, meaning: errorMeaning(code) }))
    .sort((a, b) => b.sessions - a.sessions || Number(a.code) - Number(b.code));

/** What went wrong, in words: the server's problem detail with its code, or the failure itself. */
export function describeFailure(err: unknown): string {
  if (err instanceof ApiProblem) {
    if (err.status === 0) return err.detail;
    const where = err.requestId ? `; request id ${err.requestId}` : '';
    return `${err.detail} (${err.code}, HTTP ${err.status}${where})`;
  }
  return err instanceof Error ? err.message : String(err);
}

/** A module of the server that is not deployed answers 404 route_not_found. */
export const isMissingRoute = (err: unknown): boolean => err instanceof ApiProblem && err.code === 'route_not_found';

/**
 * A media duration, one format everywhere in the page: `m:ss` (`0:42`, `12:05`), `h:mm:ss` from an
 * hour (`1:02:03`); a dash when unknown.
 */
export function duration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds) || seconds < 0) return '—';
  const total = Math.round(seconds);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}
