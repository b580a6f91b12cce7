import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import { liveDirsOfOwner, recordingsOfOwner } from '../../platform/media/media-layout.js';
import { directoryTally, type DirectoryTally } from '../../platform/quota/directory-bytes.js';
import type { StorageQuota, StorageReservation, StoredBytesSource } from '../../platform/quota/storage-quota.js';
import { storageQuotaExceeded } from '../../platform/quota/workspace-quotas.js';

/** How long a measure of a workspace's live folders is reused (a live window changes every segment). */
const LIVE_MEASURE_TTL_MS = 2_000;

/**
 * The bytes of a workspace's live folders (its slicers' live windows, hls-push input and live events being recorded), for its
 * storage quota. Measured by scanning them (files of `live/<owner>/` and `live-input/<owner>/`,
 * a few levels down), at most once per workspace every 2 s: the work is bounded by the slicers a
 * workspace may hold and the files each folder may hold (window segments, PLAYLINE_HLS_PUSH_MAX_FILES).
 */
export class LiveStorageMeter implements StoredBytesSource {
  readonly name = 'live';
  private readonly measured = new Map<string, { at: number; bytes: Promise<number> }>();

  constructor(
    private readonly mediaRoot: string,
    private readonly clock: Clock,
  ) {}

  bytes = (_db: unknown, workspaceId: string): Promise<number> => {
    const now = this.clock.now();
    const cached = this.measured.get(workspaceId);
    if (cached && now - cached.at < LIVE_MEASURE_TTL_MS) return cached.bytes;
    const bytes = this.scan(workspaceId);
    this.measured.set(workspaceId, { at: now, bytes });
    // Bounded: a workspace's entry lives until its measure is old (then dropped on the next read of another).
    if (this.measured.size > 1024) for (const [owner, entry] of this.measured) if (now - entry.at >= LIVE_MEASURE_TTL_MS) this.measured.delete(owner);
    return bytes;
  };

  /** The next read measures again (after a push here changed the folder). */
  forget(workspaceId: string): void {
    this.measured.delete(workspaceId);
  }

  private async scan(workspaceId: string): Promise<number> {
    let total = 0;
    // A recorded segment is a hard link of the live window's file: counted once.
    const seen = new Set<string>();
    // <owner>/<slicer>/<rendition>/<file>: three levels of folders.
    for (const dir of liveDirsOfOwner(this.mediaRoot, workspaceId)) total += (await directoryTally(dir, 3, seen)).bytes;
    // Recordings under way: <owner>/<slicer>/<recording>/<rendition>/<file>.
    total += (await directoryTally(recordingsOfOwner(this.mediaRoot, workspaceId), 4, seen)).bytes;
    return total;
  }
}

/** How often a workspace with a growing live window has its storage measured again (clock ms). */
const ROOM_MEASURE_MS = 1_000;

/**
 * Whether a workspace's live windows may grow their DVR tails: live windows, DVR and recordings
 * count against the storage quota, and a window at the quota trims its DVR tail rather than grow
 * (LowLatencyWindow `mayGrow`); the live event goes on. The workspace's stored bytes are measured
 * in the background, at most every second while its windows grow (the window's writes never wait
 * for a scan), and a segment may be added while the last measure plus three segments of its size
 * fit the quota: the one being added, its parts (kept beside it near the live edge), and what may
 * have landed since the measure began.
 */
export class LiveStorageRoom {
  private readonly measured = new Map<string, { used: number | undefined; at: number; measuring: Promise<void> | undefined }>();

  constructor(
    /** The workspace's stored bytes now (every source of its storage quota). */
    private readonly usedBytes: (owner: string) => Promise<number>,
    private readonly limitBytes: number,
    private readonly clock: Clock,
    private readonly onError: (err: unknown, owner: string) => void = () => undefined,
  ) {}

  /** The `mayGrow` hook of one workspace's live windows. */
  mayGrow(owner: string): (segmentBytes: number) => boolean {
    return (segmentBytes) => {
      const { used } = this.measure(owner);
      return used === undefined || used + 3 * segmentBytes <= this.limitBytes;
    };
  }

  /** The measure under way for `owner`, if any (tests wait for it rather than for time). */
  async settled(owner: string): Promise<void> {
    await this.measured.get(owner)?.measuring;
  }

  private measure(owner: string): { used: number | undefined } {
    const now = this.clock.now();
    const entry = this.measured.get(owner) ?? { used: undefined, at: Number.NEGATIVE_INFINITY, measuring: undefined };
    this.measured.set(owner, entry);
    if (entry.measuring === undefined && now - entry.at >= ROOM_MEASURE_MS) {
      entry.at = now;
      entry.measuring = this.usedBytes(owner).then(
        (used) => void (entry.used = used),
        (err: unknown) => this.onError(err, owner),
      ).finally(() => (entry.measuring = undefined));
    }
    return entry;
  }
}

export interface LiveInputLimits {
  /** PLAYLINE_HLS_PUSH_MAX_FILES */
  maxFiles: number;
  /** PLAYLINE_HLS_PUSH_MAX_FOLDER_BYTES */
  maxBytes: number;
}

/** What one push holds until it is in place: room in its slicer's input folder and in its workspace's storage quota. */
export interface LiveInputHold {
  dir: string;
  file: string;
  /** Bytes held in the folder (the body: its temporary file is beside the one it replaces). */
  bytes: number;
  /** Whether the push adds a file to the folder (none of its name was there). */
  adds: boolean;
  /** The folder's files and bytes (without the file this push replaces) when the push was admitted. */
  base: DirectoryTally;
  /** Only what the folder grows by is reserved: the file it replaces still counts where it is until the rename. */
  reservation: StorageReservation;
  released: boolean;
}

/** A push under way to one folder. */
type UnderWay = Pick<LiveInputHold, 'file' | 'bytes' | 'adds'>;

/**
 * The caps of hls-push input: files and bytes per slicer input folder (pushes to one slicer are
 * received by the instance that runs it, so the folder's pushes under way are counted here), and
 * each push's bytes in its workspace's storage quota (reserved in the database while it arrives).
 * A re-push (a name pushed again) replaces a file: it adds no file, and only what it grows the
 * folder by counts in the workspace's quota.
 */
export class LiveInputQuota {
  private readonly underWay = new Map<string, UnderWay[]>();

  constructor(
    private readonly limits: LiveInputLimits,
    private readonly storage: StorageQuota,
    private readonly meter: LiveStorageMeter,
  ) {}

  /** Before a received push is put in place: room for its `bytes` and (unless it replaces one) one more file, or 409/507. */
  async admit(owner: string, slicerId: string, dir: string, file: string, bytes: number): Promise<LiveInputHold> {
    const tally = await directoryTally(dir, 1);
    const replaced = await stat(join(dir, file)).then((s) => (s.isFile() ? s.size : undefined), () => undefined);
    const base = { files: tally.files - (replaced === undefined ? 0 : 1), bytes: tally.bytes - (replaced ?? 0) };
    const pushes = this.underWay.get(dir) ?? [];
    // Names under way that will add a file, each once; this push's own name counts as its one file below.
    const pendingFiles = new Set(pushes.filter((p) => p.adds && p.file !== file).map((p) => p.file)).size;
    const pendingBytes = pushes.reduce((sum, p) => sum + p.bytes, 0);
    const files = base.files + pendingFiles;
    if (files + 1 > this.limits.maxFiles) {
      throw new AppError('quota_exceeded', `The input folder of slicer ${slicerId} holds ${files} of its ${this.limits.maxFiles} files (PLAYLINE_HLS_PUSH_MAX_FILES): delete old segments (ffmpeg -hls_flags delete_segments) before pushing more`, {
        extra: { quota: 'live_input_files', limit: this.limits.maxFiles, used: files },
      });
    }
    this.checkFolderBytes(slicerId, base.bytes + pendingBytes, bytes);
    // Counted in the folder before the wait for the database, so a concurrent push sees it.
    const mine: UnderWay = { file, bytes, adds: replaced === undefined };
    this.underWay.set(dir, [...pushes, mine]);
    const hold = { dir, file, bytes, adds: mine.adds, base, released: false };
    try {
      return { ...hold, reservation: await this.storage.reserve(owner, Math.max(0, bytes - (replaced ?? 0))) };
    } catch (err) {
      this.giveBack(hold, mine);
      throw err;
    }
  }

  /** The push was stored (it now counts in its folder) or failed: what it held is given back. */
  async release(owner: string, hold: LiveInputHold): Promise<void> {
    if (hold.released) return;
    this.giveBack(hold);
    this.meter.forget(owner);
    await this.storage.settle(hold.reservation);
  }

  /** A file of the workspace's input folders was deleted: its next usage measures again. */
  removed(owner: string): void {
    this.meter.forget(owner);
  }

  private giveBack(hold: Pick<LiveInputHold, 'dir' | 'file' | 'bytes' | 'released'>, entry?: UnderWay): void {
    hold.released = true;
    const pushes = this.underWay.get(hold.dir) ?? [];
    const at = entry ? pushes.indexOf(entry) : pushes.findIndex((p) => p.file === hold.file && p.bytes === hold.bytes);
    const left = at < 0 ? pushes : [...pushes.slice(0, at), ...pushes.slice(at + 1)];
    if (left.length === 0) this.underWay.delete(hold.dir);
    else this.underWay.set(hold.dir, left);
  }

  private checkFolderBytes(slicerId: string, used: number, adding: number): void {
    if (used + adding <= this.limits.maxBytes) return;
    throw storageQuotaExceeded(this.limits.maxBytes, used, adding, { quota: 'live_input_bytes', setting: 'PLAYLINE_HLS_PUSH_MAX_FOLDER_BYTES', scope: `The input folder of slicer ${slicerId}` });
  }
}
