import { MarkTable, NONE, errorKey } from './session-marks.js';
import { sessionHash } from '../session-hash.js';
import { WINDOW_S } from '../stats-window.js';

/**
 * Dedupe marks of one workspace's `workspace_only` events (refusals of assets outside the
 * library), so they follow the same rule as an asset's: a session counts once per (asset,
 * session, kind) and per (asset, session, error code). Such events only reach the owner summary
 * and the history, so a mark matters while its second is inside the summary of the batch being
 * counted; a duplicate older than that counts again in the history only (as an asset's duplicate
 * behind every window does). Keys hash the asset with the session (no asset state to hang them on).
 */
export class WorkspaceMarks {
  /** [key, manifest, ad, start] seconds per (asset, session). */
  readonly sessions = new MarkTable(4);
  /** [key, second] per (asset, session, error code). */
  readonly errors = new MarkTable(2);

  /** The key of (asset, session hash): the session hash of both, as sessions of an asset are keyed. */
  static keyOf(assetId: string, session: number): number {
    return sessionHash(`${assetId}\u0000${session}`);
  }

  /**
   * Whether a session event of `kind` (MARK) may count: true, and marked at `second`, unless the
   * same (asset, session, kind) counted at a second still live for a batch received at `receivedSecond`.
   */
  admitSession(key: number, kind: number, second: number, receivedSecond: number): boolean {
    return admit(this.sessions, key, kind, second, receivedSecond);
  }

  /** As admitSession, for an error of `code` (one mark per asset, session and code). */
  admitError(key: number, code: number, second: number, receivedSecond: number): boolean {
    return admit(this.errors, errorKey(key, code), 1, second, receivedSecond);
  }

  /** Drops marks no later batch (received at `receivedSecond` or after) can be deduplicated against; how many went. */
  prune(receivedSecond: number): number {
    const live = (second: number) => isLive(second, receivedSecond);
    return this.sessions.prune(live) + this.errors.prune(live);
  }

  get size(): number {
    return this.sessions.size + this.errors.size;
  }
}

const admit = (table: MarkTable, key: number, slot: number, second: number, receivedSecond: number): boolean => {
  const at = table.ensure(key);
  const seen = table.second(at, slot);
  if (seen !== NONE && isLive(seen, receivedSecond)) return false;
  table.setSecond(at, slot, second);
  return true;
};

/** A mark inside the owner summary of a batch received at `receivedSecond` (the summary is all it dedupes). */
export const isLive = (second: number, receivedSecond: number): boolean => second > receivedSecond - WINDOW_S;
