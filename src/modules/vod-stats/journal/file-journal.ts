import { mkdir, open, readdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { encodeRecord } from './journal-record.js';
import { DirectoryLock, LOCK_FILE, PID_FILE } from '../../../platform/directory-lock.js';
import type { EventJournal, JournalBatch, JournalUsage, ReplayResult, ReplaySink } from './journal.js';
import { scanSegment, type DamagedRange } from './segment-scan.js';
import { readSnapshot, sameAsWritten, snapshotFiles, snapshotName, tempSnapshotName, writeLines, type SnapshotFile } from './snapshot-files.js';

export interface FileEventJournalOptions {
  /** Directory holding this journal's files (created if missing). */
  dir: string;
  /** A journal file is closed and a new one started past this size (default 64 MiB). */
  segmentBytes?: number;
  /**
   * Reads a snapshot file back in full the way a start would (the store's restore), rejecting
   * when it cannot: every snapshot written passes it before it counts, and a snapshot of an
   * earlier build (never read back) before it is trusted. Default: no content check (the bytes
   * are still read back and compared).
   */
  checkSnapshot?: (path: string) => Promise<void>;
  /** Told about a torn tail cut at replay. */
  warn?: (message: string) => void;
}

interface Segment {
  name: string;
  maxSeq: number;
  bytes: number;
}

interface PendingAppend {
  buffers: Buffer[];
  bytes: number;
  seq: number;
  resolve: () => void;
  reject: (error: unknown) => void;
}

const SEGMENT = /^journal-(\d{16})\.log$/;
const pad = (seq: number): string => String(seq).padStart(16, '0');
const isOwnFile = (name: string) => name !== LOCK_FILE && name !== PID_FILE && !name.startsWith('quarantine-');

/**
 * The embedded journal: append-only segment files of checksummed records, group-committed (one
 * writev + one fdatasync for every append that arrived while the previous fsync ran), plus
 * NDJSON snapshots written to a temp file, fsynced, read back and renamed into place. After a
 * snapshot, what the previous snapshot covers is deleted, so disk use stays bounded by two
 * snapshots plus the journal since the older one. A damaged record is skipped alone (copied to
 * a quarantine file); only the end of the last file can be a torn write. Every file operation
 * runs in one lane; an operating-system lock keeps a second process out.
 */
export class FileEventJournal implements EventJournal {
  private readonly dir: string;
  private readonly segmentBytes: number;
  private readonly checkSnapshot: (path: string) => Promise<void>;
  private readonly warn: (message: string) => void;
  private segments: Segment[] = [];
  private active: { handle: FileHandle; segment: Segment } | null = null;
  private queue: PendingAppend[] = [];
  private flushScheduled = false;
  private lane: Promise<unknown> = Promise.resolve();
  private failure: unknown = null;
  private closed = false;
  private snapshotting = false;
  private snapshotBytes = 0;
  private snapshotSeq = 0;
  private lock: DirectoryLock | null = null;
  /** Appends and fsyncs done, for tests and metrics. */
  readonly counters = { appends: 0, fsyncs: 0 };

  constructor(options: FileEventJournalOptions) {
    this.dir = options.dir;
    this.segmentBytes = options.segmentBytes ?? 64 * 1024 * 1024;
    this.checkSnapshot = options.checkSnapshot ?? (() => Promise.resolve());
    this.warn = options.warn ?? (() => undefined);
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.lane.then(fn, fn);
    this.lane = run.catch(() => undefined);
    return run;
  }

  private async syncDir(): Promise<void> {
    const handle = await open(this.dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  }

  async replay(sink: ReplaySink): Promise<ReplayResult> {
    await mkdir(this.dir, { recursive: true });
    this.lock = DirectoryLock.acquire(this.dir);
    let names = (await readdir(this.dir)).filter(isOwnFile).sort();
    for (const name of names) if (name.endsWith('.tmp')) await unlink(join(this.dir, name));
    names = names.filter((n) => !n.endsWith('.tmp'));
    const result: ReplayResult = { snapshotSeq: 0, lastSeq: 0, batches: 0, truncatedBytes: 0, damaged: [], lostBatches: 0, skippedSnapshots: [] };
    await this.restoreSnapshot(snapshotFiles(names), sink, result);
    const segmentNames = names.filter((n) => SEGMENT.test(n));
    for (const [i, name] of segmentNames.entries()) {
      await this.replaySegment(name, i === segmentNames.length - 1, sink, result);
    }
    return result;
  }

  /**
   * Restores the newest snapshot that still reads back; each one that does not is set aside
   * (renamed quarantine-*) and reported, and the previous one (kept for this) is used instead.
   */
  private async restoreSnapshot(candidates: SnapshotFile[], sink: ReplaySink, result: ReplayResult): Promise<void> {
    for (const file of candidates) {
      let reason: string | undefined;
      let read: { text: string; bytes: number } | null = null;
      try {
        if (file.crc === null) await this.checkSnapshot(join(this.dir, file.name));
        read = await readSnapshot(this.dir, file);
        if (read === null) reason = 'its checksum no longer matches (damaged on disk)';
      } catch (error) {
        reason = (error as Error).message;
      }
      if (read === null) {
        await rename(join(this.dir, file.name), join(this.dir, `quarantine-${file.name}`));
        result.skippedSnapshots.push({ file: file.name, reason: reason ?? 'unreadable' });
        continue;
      }
      try {
        await sink.snapshot(file.seq, read.text.split('\n'));
      } catch (error) {
        // It read back when written (or passed the check just now): the running build cannot read it.
        throw new Error(`vod-stats snapshot ${file.name} passed its checks but this build cannot restore it: ${(error as Error).message}`, { cause: error });
      }
      result.snapshotSeq = result.lastSeq = this.snapshotSeq = file.seq;
      this.snapshotBytes = read.bytes;
      return;
    }
  }

  private async replaySegment(name: string, last: boolean, sink: ReplaySink, result: ReplayResult): Promise<void> {
    const path = join(this.dir, name);
    const file = await readFile(path);
    const scan = await scanSegment(file, async (batch) => {
      if (batch.seq <= result.lastSeq) return; // covered by the snapshot
      if (result.skippedSnapshots.length > 0 && result.batches === 0 && batch.seq > result.lastSeq + 1) {
        result.lostBatches += batch.seq - result.lastSeq - 1; // no readable snapshot covers them any more
      }
      result.lastSeq = batch.seq;
      result.batches++;
      await sink.batch(batch);
    });
    const damage = [...scan.skipped];
    if (scan.tail !== null && last) {
      // A crash mid-write: the end of the last file. Cut it so appends never follow damage.
      result.truncatedBytes += scan.tail.bytes;
      this.warn(`vod-stats journal: cut ${scan.tail.bytes} bytes of a torn write at the end of ${name}`);
      const handle = await open(path, 'r+');
      await handle.truncate(scan.tail.offset);
      await handle.sync();
      await handle.close();
    } else if (scan.tail !== null) damage.push(scan.tail);
    for (const range of damage) await this.quarantine(name, file, range, result);
    this.segments.push({ name, maxSeq: scan.maxSeq, bytes: scan.tail !== null && last ? scan.tail.offset : file.length });
  }

  /** Copies damaged bytes to `quarantine-<segment>-<offset>.bin` (once) and reports them. */
  private async quarantine(segment: string, file: Buffer, range: DamagedRange, result: ReplayResult): Promise<void> {
    const quarantine = `quarantine-${segment.replace(/\.log$/, '')}-${range.offset}.bin`;
    await writeFile(join(this.dir, quarantine), file.subarray(range.offset, range.offset + range.bytes), { flag: 'wx' }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
    result.damaged.push({ file: segment, offset: range.offset, bytes: range.bytes, quarantine });
    if (range.seqAfter !== null && range.seqBefore > 0) result.lostBatches += Math.max(0, range.seqAfter - range.seqBefore - 1);
    else result.lostBatches += 1; // at least the record the damage began in
  }

  append(batch: JournalBatch): Promise<void> {
    if (this.closed) return Promise.reject(new Error('vod-stats journal is closed'));
    const buffers = encodeRecord(batch);
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ buffers, bytes: buffers[0]!.length + buffers[1]!.length, seq: batch.seq, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        void this.exclusive(() => this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    while (this.queue.length > 0) {
      const group = this.queue;
      this.queue = [];
      await this.writeGroup(group);
    }
    this.flushScheduled = false;
  }

  private async openActive(firstSeq: number): Promise<{ handle: FileHandle; segment: Segment }> {
    if (this.active !== null && this.active.segment.bytes < this.segmentBytes) return this.active;
    if (this.active !== null) {
      const full = this.active.handle;
      this.active = null;
      await full.close();
    }
    const name = `journal-${pad(firstSeq)}.log`;
    const handle = await open(join(this.dir, name), 'a');
    let segment = this.segments.find((s) => s.name === name);
    if (segment === undefined) {
      segment = { name, maxSeq: 0, bytes: (await handle.stat()).size };
      this.segments.push(segment);
    }
    await this.syncDir();
    this.active = { handle, segment };
    return this.active;
  }

  private async writeGroup(group: PendingAppend[]): Promise<void> {
    if (this.failure !== null) {
      for (const p of group) p.reject(this.failure);
      return;
    }
    let target: { handle: FileHandle; segment: Segment } | null = null;
    try {
      target = await this.openActive(group[0]!.seq);
      let buffers = group.flatMap((p) => p.buffers);
      let left = group.reduce((n, p) => n + p.bytes, 0);
      const total = left;
      while (left > 0) {
        const { bytesWritten } = await target.handle.writev(buffers);
        left -= bytesWritten;
        if (left > 0) buffers = remainder(buffers, bytesWritten);
      }
      await target.handle.datasync();
      this.counters.fsyncs++;
      this.counters.appends += group.length;
      target.segment.bytes += total;
      target.segment.maxSeq = Math.max(target.segment.maxSeq, group.at(-1)!.seq);
      for (const p of group) p.resolve();
    } catch (error) {
      // Cut a partly written group so the records after it stay readable; if even that fails,
      // stop accepting appends rather than write behind damage.
      try {
        if (target !== null) {
          await target.handle.truncate(target.segment.bytes);
          await target.handle.datasync();
        }
      } catch {
        this.failure = error;
      }
      for (const p of group) p.reject(error);
    }
  }

  async writeSnapshot(seq: number, lines: Iterable<string> | AsyncIterable<string>): Promise<void> {
    if (this.snapshotting) throw new Error('vod-stats journal: a snapshot is already being written');
    this.snapshotting = true;
    const tmp = join(this.dir, tempSnapshotName(seq));
    try {
      const written = await writeLines(tmp, lines);
      // Trusted only once read back: the same bytes, and a full restore of them (checkSnapshot).
      try {
        if (!(await sameAsWritten(tmp, written))) throw new Error('the file read back differs from what was written');
        await this.checkSnapshot(tmp);
      } catch (error) {
        await unlink(tmp).catch(() => undefined);
        throw new Error(`vod-stats snapshot at seq ${seq} does not read back, so it is not used (the journal is kept): ${(error as Error).message}`, { cause: error });
      }
      const name = snapshotName(seq, written.crc);
      await rename(tmp, join(this.dir, name));
      await this.syncDir();
      this.snapshotBytes = written.bytes;
      this.snapshotSeq = seq;
      await this.exclusive(() => this.compact(seq));
    } finally {
      this.snapshotting = false;
    }
  }

  /**
   * Keeps the newest snapshot and the one before it, and the journal since that one; deletes
   * older snapshots and the segments whose every record the previous snapshot covers.
   */
  private async compact(newest: number): Promise<void> {
    const snapshots = snapshotFiles(await readdir(this.dir));
    const previous = snapshots.find((s) => s.seq < newest);
    if (previous === undefined) return;
    for (const s of snapshots) if (s.seq < previous.seq || (s.seq === previous.seq && s !== previous)) await unlink(join(this.dir, s.name));
    if (this.active !== null && this.active.segment.maxSeq <= previous.seq) {
      await this.active.handle.close();
      this.active = null;
    }
    const kept: Segment[] = [];
    for (const segment of this.segments) {
      if (segment.maxSeq <= previous.seq && this.active?.segment !== segment) await unlink(join(this.dir, segment.name));
      else kept.push(segment);
    }
    this.segments = kept;
    await this.syncDir();
  }

  usage(): JournalUsage {
    const journalBytes = this.segments.reduce((n, s) => n + s.bytes, 0);
    // Segments holding records after the newest snapshot (what a restart replays on top of it).
    const bytesSinceSnapshot = this.segments.filter((s) => s.maxSeq > this.snapshotSeq || s.maxSeq === 0).reduce((n, s) => n + s.bytes, 0);
    return { segments: this.segments.length, journalBytes, snapshotBytes: this.snapshotBytes, bytesSinceSnapshot };
  }

  /** Bytes actually on disk in the journal directory (for tests of compaction). */
  async diskBytes(): Promise<number> {
    let total = 0;
    for (const name of await readdir(this.dir)) total += (await stat(join(this.dir, name))).size;
    return total;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.exclusive(async () => {
      if (this.active !== null) await this.active.handle.close();
      this.active = null;
      this.lock?.release();
      this.lock = null;
    });
  }
}

/** The buffers left after the first `written` bytes went out. */
const remainder = (buffers: Buffer[], written: number): Buffer[] => {
  const out: Buffer[] = [];
  let skip = written;
  for (const b of buffers) {
    if (skip >= b.length) {
      skip -= b.length;
      continue;
    }
    out.push(skip > 0 ? b.subarray(skip) : b);
    skip = 0;
  }
  return out;
};
