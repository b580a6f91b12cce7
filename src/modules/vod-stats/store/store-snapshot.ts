import { AssetState, sessionList } from './asset-state.js';
import type { OwnerState } from './asset-state.js';
import type { PlaybackEvent } from '../events.schema.js';
import type { MemoryStatsStore } from './memory-stats-store.js';
import { MinuteBucket } from './minute-bucket.js';

/**
 * Snapshot format of the embedded store: one JSON array per line, so it streams in both
 * directions and a torn file is detected by the missing `end` line.
 *   ["playline-vod-stats", 1, lastReceivedAt]
 *   ["o", ownerId, [minuteBucket...]]                              workspace minute totals
 *   ["a", assetId, startTs, latestTs, [minuteBucket...], [sessionId, manifest, ad, start, errors|0, ...]]
 *   ["p", receivedAt, [event...]]                                  not yet visible (stats_delay_ms)
 *   ["end", owners, assets]
 * Asset lines belong to the owner line before them.
 */
const MAGIC = 'playline-vod-stats';
const VERSION = 1;

const sessionRows = (asset: AssetState): unknown[] => {
  const rows: unknown[] = [];
  for (const m of sessionList(asset.sessions)) rows.push(m.id, m.manifest, m.ad, m.start, m.errors ?? 0);
  return rows;
};

/** The store's state as snapshot lines (each without its newline), owner by owner. */
export function* snapshotLines(store: MemoryStatsStore): Generator<string> {
  yield JSON.stringify([MAGIC, VERSION, store.lastReceivedAt]);
  let owners = 0;
  let assets = 0;
  for (const owner of store.owners.values()) {
    owners++;
    yield JSON.stringify(['o', owner.id, owner.minutes]);
    for (const asset of owner.assets.values()) {
      assets++;
      yield JSON.stringify(['a', asset.id, asset.startTs, asset.latestTs, asset.buckets, sessionRows(asset)]);
    }
  }
  for (const batch of store.pendingBatches()) yield JSON.stringify(['p', batch.receivedAt, batch.events]);
  yield JSON.stringify(['end', owners, assets]);
}

const fail = (what: string): never => {
  throw new Error(`vod-stats snapshot: ${what}`);
};

const num = (value: unknown): number => (typeof value === 'number' ? value : fail('expected a number'));
const str = (value: unknown): string => (typeof value === 'string' ? value : fail('expected a string'));
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : fail('expected a list'));

const restoreAsset = (store: MemoryStatsStore, owner: OwnerState, row: unknown[]): void => {
  const asset = new AssetState(str(row[1]), store.nextAssetSeq());
  asset.startTs = num(row[2]);
  asset.latestTs = num(row[3]);
  asset.buckets = list(row[4]).map((b) => MinuteBucket.fromJSON(b));
  const sessions = list(row[5]);
  for (let i = 0; i + 4 < sessions.length; i += 5) {
    const marks = asset.marks(str(sessions[i]));
    marks.manifest = num(sessions[i + 1]);
    marks.ad = num(sessions[i + 2]);
    marks.start = num(sessions[i + 3]);
    const errors = sessions[i + 4];
    marks.errors = Array.isArray(errors) ? errors.map(num) : null;
  }
  asset.reanchor();
  owner.assets.set(asset.id, asset);
};

/**
 * Loads snapshot lines into an empty store. Throws on anything malformed or truncated, so a
 * damaged snapshot is never taken for a complete one.
 */
export const restoreSnapshot = (store: MemoryStatsStore, lines: Iterable<string>): void => {
  let owner: OwnerState | undefined;
  let header = false;
  let ended = false;
  for (const line of lines) {
    if (line === '') continue;
    if (ended) fail('data after the end line');
    const row = list(JSON.parse(line));
    if (!header) {
      if (row[0] !== MAGIC || row[1] !== VERSION) fail('unknown format or version');
      store.lastReceivedAt = num(row[2]);
      header = true;
      continue;
    }
    switch (row[0]) {
      case 'o':
        owner?.rankAll();
        owner = store.ownerState(str(row[1]));
        owner.minutes = list(row[2]).map((b) => MinuteBucket.fromJSON(b));
        break;
      case 'a':
        restoreAsset(store, owner ?? fail('asset line before any owner line'), row);
        break;
      case 'p':
        store.restorePending(num(row[1]), list(row[2]) as PlaybackEvent[]);
        break;
      case 'end':
        ended = true;
        break;
      default:
        fail('unknown line kind');
    }
  }
  if (!ended) fail('truncated (no end line)');
  owner?.rankAll();
};
