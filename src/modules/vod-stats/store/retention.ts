import type { OwnerState } from './asset-state.js';
import type { PruneResult, StoreSize } from './stats-store.js';
import { RETENTION_MS, minuteOf, secondOf, windowStart } from '../stats-window.js';

/**
 * Lets go of what no query of the embedded store can read any more as of `ref` (Unix ms):
 * assets past retention, detail before each window, history before the serving window, and
 * dedupe marks that can no longer matter. A workspace left with nothing is handed to
 * `dropOwner` (which removes it from `owners`). Only ever drops what is invisible, so what
 * queries show never depends on when this ran.
 */
export const pruneOwners = (owners: ReadonlyMap<string, OwnerState>, ref: number, dropOwner: (id: string, owner: OwnerState) => void): PruneResult => {
  const second = secondOf(ref);
  const historyFirst = minuteOf(ref - RETENTION_MS);
  const result: PruneResult = { assetsRemoved: 0, bucketsRemoved: 0, sessionsRemoved: 0 };
  for (const [id, owner] of owners) {
    for (const asset of owner.assets.values()) {
      if (asset.anchorTs + RETENTION_MS < ref) {
        owner.removeAsset(asset);
        result.assetsRemoved++;
        result.bucketsRemoved += asset.bucketCount();
        result.sessionsRemoved += asset.markCount();
        continue;
      }
      const removed = asset.prune(second, historyFirst);
      result.bucketsRemoved += removed.buckets;
      result.sessionsRemoved += removed.sessions;
    }
    owner.detail.dropBefore(windowStart(second));
    if (owner.marks !== null) {
      result.sessionsRemoved += owner.marks.prune(second);
      if (owner.marks.size === 0) owner.marks = null;
    }
    owner.history.dropBefore(historyFirst);
    if (owner.qoe !== null) {
      owner.qoe.dropBefore(historyFirst);
      if (owner.qoe.length === 0) owner.qoe = null;
    }
    if (owner.assets.size === 0 && owner.bucketCount() === 0 && owner.marks === null) dropOwner(id, owner);
    else if (owner.dirty.length > 0) owner.flushRanking();
  }
  return result;
};

/** What the embedded store holds: workspaces, assets, buckets and dedupe marks, and `pendingEvents` not yet visible. */
export const storeSize = (owners: Iterable<OwnerState>, pendingEvents: number): StoreSize => {
  const size: StoreSize = { owners: 0, assets: 0, buckets: 0, sessions: 0, ownerBuckets: 0, pendingEvents };
  for (const owner of owners) {
    size.owners++;
    size.ownerBuckets += owner.bucketCount();
    size.sessions += owner.marks?.size ?? 0;
    for (const asset of owner.assets.values()) {
      size.assets++;
      size.buckets += asset.bucketCount();
      size.sessions += asset.markCount();
    }
  }
  return size;
};
