import { rm } from 'node:fs/promises';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import { decodeTimeIdCursor, encodeCursor } from '../../platform/http/cursor.js';
import type { IdGenerator } from '../../platform/ids.js';
import type { MediaTools } from '../../platform/media/media-tools.js';
import type { AssetState } from './assets.schema.js';
import type { AssetCursor, AssetRecord, AssetStore, NewRecording } from './asset-store.js';
import type { AssetFiles } from './asset-files.js';
import type { ReceivedFile } from '../../platform/http/body-file.js';
import type { Db } from '../../platform/db/database.js';
import type { StorageQuota, StorageReservation } from '../../platform/quota/storage-quota.js';
import { lockWorkspace, quotaExceeded } from '../../platform/quota/workspace-quotas.js';

export interface AssetServiceDeps {
  store: AssetStore;
  files: AssetFiles;
  clock: Clock;
  ids: IdGenerator;
  /** The media tools as found at start-up (undefined until then). */
  tools: () => MediaTools | undefined;
  /** The packaging runner: woken after an upload, told when an asset is deleted. */
  runner: { claimNow(): Promise<void>; cancel(assetId: string): Promise<void> };
  /** The workspace's storage quota (uploads hold bytes in it while they arrive). */
  storage: StorageQuota;
  /** PLAYLINE_QUOTA_ASSETS */
  maxAssets: number;
  /** Counts the workspace's assets through `db` (the quota check's transaction). */
  countAssets(db: Db, owner: string): Promise<number>;
  db: Db;
}

/** A body without a Content-Length holds storage in steps of this much as it arrives (fewer database writes). */
const UPLOAD_HOLD_STEP = 8 * 1024 * 1024;

export interface AssetPageRequest {
  state?: AssetState | undefined;
  source_slicer_id?: string | undefined;
  limit?: number | undefined;
  cursor?: string | undefined;
}

export interface AssetPage {
  items: AssetRecord[];
  total: number;
  /** Cursor of the next page; undefined on the last page. */
  nextCursor: string | undefined;
}

/** The asset library of a workspace. Never sees HTTP; throws AppError. */
export class AssetService {
  constructor(private readonly deps: AssetServiceDeps) {}

  /** Throws 503 media_tools_missing (with the install hint) unless ffmpeg and ffprobe were found. */
  assertAvailable(): void {
    const tools = this.deps.tools();
    if (tools?.available) return;
    const reason = tools ? tools.reason : 'The media tools are still being looked for; try again in a moment.';
    throw new AppError('media_tools_missing', reason, { extra: { hint: 'apt-get install ffmpeg, or set PLAYLINE_FFMPEG_PATH and PLAYLINE_FFPROBE_PATH' } });
  }

  /** A fresh path for an upload to be received into. */
  newUploadPath(): string {
    return this.deps.files.newUploadPath();
  }

  /**
   * Before an upload's body is read: refuses it when the workspace holds its quota of assets
   * (409 quota_exceeded), and holds `declaredBytes` (0 when the length is unknown) of its storage
   * quota (507 storage_quota_exceeded when they do not fit). Release the hold if the upload fails.
   */
  async admitUpload(owner: string, declaredBytes: number | undefined): Promise<StorageReservation> {
    await this.checkAssetCount(this.deps.db, owner);
    return this.deps.storage.reserve(owner, declaredBytes ?? 0);
  }

  /** An upload received `receivedBytes` so far: its hold grows (in steps) to cover them, or 507 cuts it. */
  async holdReceived(hold: StorageReservation, receivedBytes: number): Promise<void> {
    if (receivedBytes <= hold.bytes) return;
    await this.deps.storage.grow(hold, receivedBytes + UPLOAD_HOLD_STEP, receivedBytes);
  }

  /** An upload that did not become an asset gives its held bytes back. */
  releaseUpload(hold: StorageReservation): Promise<void> {
    return this.deps.storage.settle(hold);
  }

  private async checkAssetCount(db: Db, owner: string): Promise<void> {
    const count = await this.deps.countAssets(db, owner);
    if (count >= this.deps.maxAssets) throw quotaExceeded('assets', this.deps.maxAssets, count);
  }

  /**
   * Makes a received upload a new asset (`uploaded`, queued for packaging) and wakes the runner.
   * The asset's row takes over the upload's held bytes in the same transaction, which also
   * checks the asset quota again (another upload may have become an asset meanwhile).
   */
  async createFromUpload(owner: string, upload: ReceivedFile, title: string | undefined, hold?: StorageReservation): Promise<AssetRecord> {
    if (upload.bytes === 0) {
      await rm(upload.path, { force: true });
      throw new AppError('bad_request', 'The upload is empty: send the media file as the request body');
    }
    const id = this.deps.ids.hex();
    await this.deps.files.adoptUpload(upload.path, owner, id);
    let created: AssetRecord;
    try {
      const admit = async (trx: Db) => {
        await lockWorkspace(trx, owner);
        await this.checkAssetCount(trx, owner);
        if (hold) await this.deps.storage.settle(hold, trx);
      };
      created = await this.deps.store.insertWithJob({ id, workspaceId: owner, title: title ?? null, sizeBytes: upload.bytes, createdAt: this.deps.clock.now() }, admit);
    } catch (err) {
      if (hold) hold.settled = false;
      await this.deps.files.removeSource(owner, id);
      throw err;
    }
    await this.deps.runner.claimNow();
    return (await this.deps.store.find(owner, id)) ?? created;
  }

  /** Whether the workspace holds fewer assets than its quota (a recording may open: it counts as one). */
  async hasRoomForAsset(owner: string): Promise<boolean> {
    return (await this.deps.countAssets(this.deps.db, owner)) < this.deps.maxAssets;
  }

  /**
   * A recorded live event, finished in `dir` (manifest.json, poster and renditions, in the media
   * root), becomes a `ready` asset of the workspace: moved into place, then its row. Its bytes
   * were counted in the workspace's storage as they were recorded (live storage); they count as
   * the asset's from now on.
   */
  async adoptRecording(recording: Omit<NewRecording, 'id' | 'createdAt'> & { dir: string }): Promise<AssetRecord> {
    const id = this.deps.ids.hex();
    const { dir, ...fields } = recording;
    await this.deps.files.adoptRecording(dir, recording.workspaceId, id);
    try {
      return await this.deps.store.insertRecording({ ...fields, id, createdAt: this.deps.clock.now() });
    } catch (err) {
      await this.deps.files.removeAll(recording.workspaceId, id);
      throw err;
    }
  }

  async get(owner: string, assetId: string): Promise<AssetRecord> {
    const found = await this.deps.store.find(owner, assetId);
    if (!found) throw notFound(assetId);
    return found;
  }

  /**
   * Assets of the workspace, newest first, like the slicer task list: without `limit` every one
   * (after the cursor, if given) in one answer; with it, a page and the cursor of the next one.
   */
  async list(owner: string, page: AssetPageRequest): Promise<AssetPage> {
    const { limit } = page;
    const after = page.cursor === undefined ? undefined : decodeAssetCursor(page.cursor);
    const { items, total } = await this.deps.store.list(owner, { state: page.state, sourceSlicerId: page.source_slicer_id }, limit === undefined ? undefined : limit + 1, after);
    if (limit === undefined) return { items, total, nextCursor: undefined };
    const shown = items.slice(0, limit);
    const last = shown.at(-1);
    const nextCursor = items.length > limit && last ? encodeCursor([last.createdAt, last.id]) : undefined;
    return { items: shown, total, nextCursor };
  }

  async update(owner: string, assetId: string, title: string): Promise<AssetRecord> {
    const updated = await this.deps.store.updateTitle(owner, assetId, title, this.deps.clock.now());
    if (!updated) throw notFound(assetId);
    return updated;
  }

  /**
   * Packages a `failed` asset again from its kept upload (issue 36): `uploaded`, queued like a new
   * upload (409 conflict when it is not failed, or its upload was not kept).
   */
  async retry(owner: string, assetId: string): Promise<AssetRecord> {
    const asset = await this.get(owner, assetId);
    if (asset.state !== 'failed') throw new AppError('conflict', `Asset ${assetId} is ${asset.state}: only a failed asset is packaged again`);
    if (!(await this.deps.files.hasSource(owner, assetId))) {
      throw new AppError('conflict', `Asset ${assetId} no longer has its upload (it failed before uploads were kept): upload the file again`);
    }
    if (!(await this.deps.store.requeueFailed(owner, assetId, this.deps.clock.now()))) {
      throw new AppError('conflict', `Asset ${assetId} changed meanwhile: only a failed asset is packaged again`);
    }
    await this.deps.runner.claimNow();
    return this.get(owner, assetId);
  }

  /** Removes the asset and its media; a packaging run of it stops first. */
  async delete(owner: string, assetId: string): Promise<void> {
    if (!(await this.deps.store.delete(owner, assetId))) throw notFound(assetId);
    await this.deps.runner.cancel(assetId);
    await this.deps.files.removeAll(owner, assetId);
  }

  /**
   * Before a workspace's rows go: stops packaging its assets and removes their media (sources,
   * work and packaged output), so nothing of it is left on disk.
   */
  async stopAndRemoveMedia(owner: string): Promise<void> {
    const { items } = await this.deps.store.list(owner, {}, undefined);
    for (const asset of items) {
      await this.deps.runner.cancel(asset.id);
      await this.deps.files.removeAll(owner, asset.id);
    }
  }

  /** The poster image of a ready asset. */
  async posterPath(owner: string, assetId: string): Promise<string> {
    const asset = await this.get(owner, assetId);
    if (asset.state !== 'ready') throw new AppError('not_found', `Asset ${assetId} has no poster until it is ready (it is ${asset.state})`);
    return this.deps.files.posterPath(owner, assetId);
  }
}

const notFound = (assetId: string) => new AppError('not_found', `No asset ${assetId}`);

function decodeAssetCursor(cursor: string): AssetCursor {
  const { time, id } = decodeTimeIdCursor(cursor);
  return { createdAt: time, id };
}
