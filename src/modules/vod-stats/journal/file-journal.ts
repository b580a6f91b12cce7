import { mkdir, open, readdir, readFile, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { decodeRecord, encodeRecord } from './journal-record.js';
import type { EventJournal, JournalBatch, JournalUsage, ReplayResult, ReplaySink } from './journal.js';

export interface FileEventJournalOptions {
  /** Directory holding this journal's files (created if missing). */
  dir: string;
  /** A journal file is closed and a new one started past this size (default 64 MiB). */
  segmentBytes?: number;
  /** Told about damage repaired at replay. */
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
const SNAPSHOT = /^snapshot-(\d{16})\.ndjson$/;
const pad = (seq: number): string => String(seq).padStart(16, '0');
const seqOf = (name: string, pattern: RegExp): number => Number(pattern.exec(name)?.[1] ?? -1);

/**
 * The embedded journal: append-only segment files of CRC-checked records, group-committed
 * (one writev + one fdatasync for every append that arrived while the previous fsync ran),
 * plus NDJSON snapshots written to a temp file, fsynced and renamed into place. After a
 * snapshot, the segments it covers and older snapshots are deleted, so disk use stays bounded
 * by the latest state plus the journal written since. Every file operation runs in one lane.
 */
export class FileEventJournal implements EventJournal {
  private readonly dir: string;
  private readonly segmentBytes: number;
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
  private locked = false;
  /** Appends and fsyncs done, for tests and metrics. */
  readonly counters = { appends: 0, fsyncs: 0 };

  constructor(options: FileEventJournalOptions) {
    this.dir = options.dir;
    this.segmentBytes = options.segmentBytes ?? 64 * 1024 * 1024;
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

  /**
   * One process per journal: a LOCK file names the owner's pid. A lock left by a process that no
   * longer runs (kill -9) is taken over; a live one stops this start with a clear message.
   */
  private async lock(): Promise<void> {
    const path = join(this.dir, 'LOCK');
    const holder = Number((await readFile(path, 'utf8').catch(() => '')).trim());
    if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isRunning(holder)) {
      throw new Error(`vod-stats journal ${this.dir} is in use by process ${holder}; one server per data directory`);
    }
    await writeFile(path, `${process.pid}\n`);
    this.locked = true;
  }

  async replay(sink: ReplaySink): Promise<ReplayResult> {
    await mkdir(this.dir, { recursive: true });
    await this.lock();
    const names = (await readdir(this.dir)).filter((n) => n !== 'LOCK').sort();
    for (const name of names) if (name.endsWith('.tmp')) await unlink(join(this.dir, name));
    const snapshots = names.filter((n) => SNAPSHOT.test(n));
    const latest = snapshots.at(-1);
    const result: ReplayResult = { snapshotSeq: 0, lastSeq: 0, batches: 0, truncatedBytes: 0 };
    if (latest !== undefined) {
      const text = await readFile(join(this.dir, latest), 'utf8');
      result.snapshotSeq = result.lastSeq = seqOf(latest, SNAPSHOT);
      this.snapshotBytes = Buffer.byteLength(text);
      await sink.snapshot(result.snapshotSeq, text.split('\n'));
      for (const old of snapshots.slice(0, -1)) await unlink(join(this.dir, old));
    }
    for (const name of names.filter((n) => SEGMENT.test(n))) {
      const path = join(this.dir, name);
      const file = await readFile(path);
      const segment: Segment = { name, maxSeq: 0, bytes: 0 };
      for (let offset = 0; ; ) {
        const record = decodeRecord(file, offset);
        if ('end' in record) break;
        if ('damaged' in record) {
          result.truncatedBytes += file.length - offset;
          this.warn(`vod-stats journal: cut ${file.length - offset} damaged bytes at the end of ${name}`);
          const handle = await open(path, 'r+');
          await handle.truncate(offset);
          await handle.sync();
          await handle.close();
          break;
        }
        const { batch } = record;
        offset = segment.bytes = record.next;
        segment.maxSeq = Math.max(segment.maxSeq, batch.seq);
        if (batch.seq > result.lastSeq) {
          result.lastSeq = batch.seq;
          result.batches++;
          await sink.batch(batch);
        }
      }
      this.segments.push(segment);
    }
    return result;
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

  async writeSnapshot(seq: number, lines: Iterable<string>): Promise<void> {
    if (this.snapshotting) throw new Error('vod-stats journal: a snapshot is already being written');
    this.snapshotting = true;
    try {
      const name = `snapshot-${pad(seq)}.ndjson`;
      const tmp = join(this.dir, `${name}.tmp`);
      const handle = await open(tmp, 'w');
      let bytes = 0;
      try {
        let chunk: string[] = [];
        let chunkChars = 0;
        for (const line of lines) {
          chunk.push(line);
          chunkChars += line.length + 1;
          if (chunkChars >= 1 << 20) {
            bytes += (await handle.write(`${chunk.join('\n')}\n`)).bytesWritten;
            chunk = [];
            chunkChars = 0;
          }
        }
        if (chunk.length > 0) bytes += (await handle.write(`${chunk.join('\n')}\n`)).bytesWritten;
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(tmp, join(this.dir, name));
      await this.syncDir();
      this.snapshotBytes = bytes;
      await this.exclusive(() => this.compact(seq, name));
    } finally {
      this.snapshotting = false;
    }
  }

  /** Deletes the segments whose every record is covered by snapshot `seq`, and older snapshots. */
  private async compact(seq: number, keepSnapshot: string): Promise<void> {
    if (this.active !== null && this.active.segment.maxSeq <= seq) {
      await this.active.handle.close();
      this.active = null;
    }
    const kept: Segment[] = [];
    for (const segment of this.segments) {
      if (segment.maxSeq <= seq && this.active?.segment !== segment) await unlink(join(this.dir, segment.name));
      else kept.push(segment);
    }
    this.segments = kept;
    for (const name of await readdir(this.dir)) {
      if (SNAPSHOT.test(name) && name !== keepSnapshot) await unlink(join(this.dir, name));
    }
    await this.syncDir();
  }

  usage(): JournalUsage {
    const journalBytes = this.segments.reduce((n, s) => n + s.bytes, 0);
    return { segments: this.segments.length, journalBytes, snapshotBytes: this.snapshotBytes, bytesSinceSnapshot: journalBytes };
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
      if (this.locked) await rm(join(this.dir, 'LOCK'), { force: true });
      this.locked = false;
    });
  }
}

const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

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
