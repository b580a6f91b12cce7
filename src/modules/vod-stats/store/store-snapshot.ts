import { AssetState } from './asset-state.js';
import type { OwnerState } from './asset-state.js';
import { BucketSeries, QOE_STRIDE, finiteList } from './bucket-series.js';
import type { PlaybackEvent } from '../events.schema.js';
import { EventColumns, TYPE_NAMES } from '../event-columns.js';
import type { PendingBatch } from './pending-batches.js';

/**
 * Snapshot format of the embedded store: one JSON array per line, so it streams in both
 * directions and a torn file is detected by the missing `end` line.
 *   ["playline-vod-stats", 2, lastReceivedAt]
 *   ["o", ownerId, detail, history, qoe|0, sessionMarks, errorMarks]  workspace totals (BucketSeries) and
 *                                                              the marks of its workspace-only events
 *                                                              (earlier builds: without the marks)
 *   ["a", assetId, startTs, latestTs, floor, detail, history, sessionMarks, errorMarks, qoe|0]
 *   ["p", receivedAt, [row...]]                                not yet visible (stats_delay_ms)
 * A pending row is [type, owner, asset, sessionHash, ts, latency or startup|null, errorCode,
 * workspaceOnly 0|1] (EventColumns; type by TYPE). Earlier builds wrote event objects there
 * (with the session id): they are still read.
 *   ["end", owners, assets]
 * Asset lines belong to the owner line before them. Every number is checked to be finite on
 * the way in: a snapshot is data from disk, never trusted.
 */
const MAGIC = 'playline-vod-stats';
const VERSION = 2;

/** What the codec reads of a store to write its snapshot (as the lines are consumed, not before). */
export interface SnapshotSource {
  /** The latest receipt time (receipt times only move forward, across a restart too). */
  lastReceivedAt(): number;
  owners(): Iterable<OwnerState>;
  /** Batches received and not visible yet (stats_delay_ms), oldest first. */
  pendingBatches(): Iterable<PendingBatch>;
}

/** What the codec needs of an empty store to load a snapshot into it. */
export interface SnapshotTarget {
  setLastReceivedAt(receivedAt: number): void;
  /** The workspace's state, made if it is new. */
  ownerState(id: string): OwnerState;
  /** The creation number of the next asset (assets are read in creation order). */
  nextAssetSeq(): number;
  /** Queues a batch not visible yet, after the ones restored before it. */
  restorePending(receivedAt: number, events: EventColumns): void;
}

/** The store's state as snapshot lines (each without its newline), owner by owner. */
export function* snapshotLines(store: SnapshotSource): Generator<string> {
  yield JSON.stringify([MAGIC, VERSION, store.lastReceivedAt()]);
  let owners = 0;
  let assets = 0;
  for (const owner of store.owners()) {
    owners++;
    yield JSON.stringify(['o', owner.id, owner.detail, owner.history, owner.qoe ?? 0, owner.marks?.sessions.toJSON() ?? [], owner.marks?.errors.toJSON() ?? []]);
    for (const asset of owner.assets.values()) {
      assets++;
      yield JSON.stringify([
        'a', asset.id, asset.startTs, asset.latestTs, asset.floor, asset.detail, asset.history,
        asset.sessions?.toJSON() ?? [], asset.errorMarks?.toJSON() ?? [], asset.qoe ?? 0,
      ]);
    }
  }
  for (const batch of store.pendingBatches()) yield JSON.stringify(['p', batch.receivedAt, pendingRows(batch.events, batch.from, batch.to)]);
  yield JSON.stringify(['end', owners, assets]);
}

const fail = (what: string): never => {
  throw new Error(`vod-stats snapshot: ${what}`);
};

const num = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : fail('expected a finite number'));
const str = (value: unknown): string => (typeof value === 'string' ? value : fail('expected a string'));
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : fail('expected a list'));
const series = (value: unknown, stride?: number): BucketSeries => {
  try {
    return BucketSeries.fromJSON(value, stride);
  } catch (error) {
    return fail((error as Error).message);
  }
};
const marks = (value: unknown, stride: number): number[] => {
  try {
    return finiteList(value, stride);
  } catch (error) {
    return fail((error as Error).message);
  }
};

const qoeOf = (value: unknown): BucketSeries | null => (value === 0 ? null : series(value, QOE_STRIDE));

const EVENT_TYPES = new Set(['request', 'manifest', 'ad', 'start', 'error', 'rebuffer']);
const optionalNumber = (value: unknown): boolean => value === undefined || value === null || (typeof value === 'number' && Number.isFinite(value));

/** An event of a pending batch, checked field by field (it was accepted once; the file may have changed since). */
const pendingEvent = (value: unknown): PlaybackEvent => {
  if (typeof value !== 'object' || value === null) return fail('pending event is not an object');
  const e = value as Record<string, unknown>;
  if (!EVENT_TYPES.has(e.type as string)) fail('pending event type');
  str(e.owner);
  str(e.asset_id);
  str(e.session_id);
  num(e.ts);
  if (!optionalNumber(e.latency_ms) || !optionalNumber(e.error_code) || !optionalNumber(e.startup_ms)) fail('pending event numbers');
  return e as unknown as PlaybackEvent;
};

/** Rows [from, to) of pending columns as snapshot rows. */
const pendingRows = (c: EventColumns, from: number, to: number): unknown[] => {
  const rows: unknown[] = [];
  for (let i = from; i < to; i++) {
    rows.push([c.type[i], c.owner[i], c.asset[i], c.session[i], c.ts[i], c.valueAt(i) ?? null, c.code[i], c.workspaceOnly(i) ? 1 : 0]);
  }
  return rows;
};

const SESSION_HASH_LIMIT = 2 ** 53;
/** Pending rows read back, each checked (the file may have changed since it was written). */
const pendingColumns = (rows: unknown[]): EventColumns => {
  if (rows.some((row) => !Array.isArray(row))) return EventColumns.fromEvents(rows.map(pendingEvent));
  const columns = new EventColumns({ capacity: rows.length });
  rows.forEach((value, i) => {
    const row = list(value);
    if (row.length !== 8) fail('malformed pending row');
    const type = num(row[0]);
    if (!Number.isInteger(type) || TYPE_NAMES[type] === undefined) fail('pending row type');
    const session = num(row[3]);
    if (!Number.isInteger(session) || session < 0 || session >= SESSION_HASH_LIMIT) fail('pending row session');
    const code = num(row[6]);
    if (!Number.isInteger(code) || code < 0 || code > 0xffff) fail('pending row error code');
    const value_ = row[5] === null ? undefined : num(row[5]);
    columns.pushRow(type, str(row[1]), str(row[2]), session, num(row[4]), value_, code, row[7] === 1, i);
  });
  return columns;
};

const restoreWorkspaceMarks = (owner: OwnerState, sessionRow: unknown, errorRow: unknown): void => {
  const sessions = marks(sessionRow, 4);
  const errors = marks(errorRow, 2);
  if (sessions.length === 0 && errors.length === 0) return;
  try {
    if (sessions.length > 0) owner.workspaceMarks().sessions.load(sessions);
    if (errors.length > 0) owner.workspaceMarks().errors.load(errors);
  } catch (error) {
    fail((error as Error).message);
  }
};

const restoreAsset = (store: SnapshotTarget, owner: OwnerState, row: unknown[], retain: boolean): void => {
  if (row.length !== 10) fail('malformed asset line');
  const asset = new AssetState(str(row[1]), store.nextAssetSeq());
  asset.startTs = num(row[2]);
  asset.latestTs = num(row[3]);
  asset.floor = num(row[4]);
  asset.detail = series(row[5]);
  asset.history = series(row[6]);
  const sessions = marks(row[7], 4);
  const errors = marks(row[8], 2);
  try {
    if (sessions.length > 0) asset.sessionTable().load(sessions);
    if (errors.length > 0) asset.errorTable().load(errors);
  } catch (error) {
    fail((error as Error).message);
  }
  asset.qoe = qoeOf(row[9]);
  asset.reanchor();
  if (retain) owner.assets.set(asset.id, asset);
};

/**
 * Loads snapshot lines into an empty store. Throws on anything malformed, truncated or not
 * finite, so a damaged snapshot is never taken for a complete one. Returns the number of assets
 * read. `retain: false` (the read-back check) builds and checks every asset exactly as a start
 * would, then lets it go: the check's memory is one asset at a time, not a second copy of the
 * store.
 */
export const restoreSnapshot = (store: SnapshotTarget, lines: Iterable<string>, options: { retain?: boolean } = {}): number => {
  const retain = options.retain ?? true;
  let owner: OwnerState | undefined;
  let header = false;
  let ended = false;
  let owners = 0;
  let assets = 0;
  for (const line of lines) {
    if (line === '') continue;
    if (ended) fail('data after the end line');
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      fail('a line is not JSON');
    }
    const row = list(parsed);
    if (!header) {
      if (row[0] !== MAGIC || row[1] !== VERSION) fail(`unknown format or version (this build reads version ${VERSION})`);
      store.setLastReceivedAt(num(row[2]));
      header = true;
      continue;
    }
    switch (row[0]) {
      case 'o':
        if (row.length !== 5 && row.length !== 7) fail('malformed owner line');
        owner?.rankAll();
        owner = store.ownerState(str(row[1]));
        owner.detail = series(row[2]);
        owner.history = series(row[3]);
        owner.qoe = qoeOf(row[4]);
        if (row.length === 7) restoreWorkspaceMarks(owner, row[5], row[6]);
        owners++;
        break;
      case 'a':
        restoreAsset(store, owner ?? fail('asset line before any owner line'), row, retain);
        assets++;
        break;
      case 'p':
        store.restorePending(num(row[1]), pendingColumns(list(row[2])));
        break;
      case 'end':
        if (num(row[1]) !== owners || num(row[2]) !== assets) fail('the end line does not match the lines before it');
        ended = true;
        break;
      default:
        fail('unknown line kind');
    }
  }
  if (!ended) fail('truncated (no end line)');
  owner?.rankAll();
  return assets;
};
