import { closeSync, openSync, readSync } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';

/**
 * Snapshot files of the embedded journal. A snapshot is written to a temp file, read back, and
 * only then renamed to `snapshot-<seq>-<crc32>.ndjson`: a file with that name was read back
 * whole when it was written, and its checksum proves on every start that it is still the same
 * bytes. `snapshot-<seq>.ndjson` is the name earlier builds used (never read back: checked in
 * full before it is trusted).
 */
const CHECKED = /^snapshot-(\d{16})-([0-9a-f]{8})\.ndjson$/;
const UNCHECKED = /^snapshot-(\d{16})\.ndjson$/;

export interface SnapshotFile {
  name: string;
  seq: number;
  /** The checksum it was read back with; null for a snapshot of an earlier build. */
  crc: number | null;
}

const pad = (seq: number): string => String(seq).padStart(16, '0');

export const snapshotName = (seq: number, crc: number): string => `snapshot-${pad(seq)}-${crc.toString(16).padStart(8, '0')}.ndjson`;
export const tempSnapshotName = (seq: number): string => `snapshot-${pad(seq)}.ndjson.tmp`;

/** The snapshots among `names`, newest first (a read-back one before an earlier build's at the same seq). */
export const snapshotFiles = (names: readonly string[]): SnapshotFile[] => {
  const found: SnapshotFile[] = [];
  for (const name of names) {
    const checked = CHECKED.exec(name);
    if (checked) found.push({ name, seq: Number(checked[1]), crc: parseInt(checked[2] as string, 16) });
    const unchecked = UNCHECKED.exec(name);
    if (unchecked) found.push({ name, seq: Number(unchecked[1]), crc: null });
  }
  return found.sort((a, b) => b.seq - a.seq || (a.crc === null ? 1 : 0) - (b.crc === null ? 1 : 0));
};

/** Snapshot text written at a time (an item at least this long is written as it comes). */
export const SNAPSHOT_WRITE_CHARS = 1 << 20;

/**
 * Writes `lines` to `path`, each item followed by a newline (an item may hold several lines
 * joined by newlines: a snapshot streamed in chunks), and fsyncs it; resolves with its size and
 * checksum. An asynchronous source is written as it comes, about a MiB at a time, so what is
 * held in memory stays about that size however large the file.
 */
export const writeLines = async (path: string, lines: Iterable<string> | AsyncIterable<string>): Promise<{ bytes: number; crc: number }> => {
  const handle = await open(path, 'w');
  let bytes = 0;
  let crc = 0;
  const flush = async (chunk: string[]) => {
    const data = Buffer.from(`${chunk.join('\n')}\n`, 'utf8');
    crc = crc32(data, crc);
    for (let at = 0; at < data.length; ) at += (await handle.write(data, at)).bytesWritten;
    bytes += data.length;
  };
  try {
    let chunk: string[] = [];
    let chunkChars = 0;
    /** Holds a line; true once a chunk's worth is held. */
    const take = (line: string): boolean => {
      chunk.push(line);
      chunkChars += line.length + 1;
      return chunkChars >= SNAPSHOT_WRITE_CHARS;
    };
    const flushHeld = async () => {
      const full = chunk;
      chunk = [];
      chunkChars = 0;
      await flush(full);
    };
    if (Symbol.asyncIterator in lines) {
      for await (const line of lines) if (take(line)) await flushHeld();
    } else {
      for (const line of lines) if (take(line)) await flushHeld();
    }
    if (chunk.length > 0) await flush(chunk);
    await handle.sync();
  } finally {
    await handle.close();
  }
  return { bytes, crc };
};

/**
 * The lines of a file (without their newlines), read `chunkBytes` at a time: a file of any size
 * costs one chunk and one line of memory. Each line is decoded alone, which gives the lines of
 * decoding the whole file and splitting it (a newline byte is never part of a multi-byte
 * character).
 */
export function* fileLines(path: string, chunkBytes = 1 << 20): Generator<string> {
  const fd = openSync(path, 'r');
  try {
    const chunk = Buffer.allocUnsafe(chunkBytes);
    let rest: Buffer = Buffer.alloc(0);
    for (;;) {
      const read = readSync(fd, chunk, 0, chunk.length, null);
      if (read === 0) break;
      let data = chunk.subarray(0, read);
      if (rest.length > 0) data = Buffer.concat([rest, data]);
      let start = 0;
      for (let end = data.indexOf(0x0a); end !== -1; end = data.indexOf(0x0a, start)) {
        yield data.toString('utf8', start, end);
        start = end + 1;
      }
      // A copy: the chunk is read into again.
      rest = Buffer.from(data.subarray(start));
    }
    if (rest.length > 0) yield rest.toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** Reads a snapshot file; null when a read-back one no longer has its checksum (damaged since). */
export const readSnapshot = async (dir: string, file: SnapshotFile): Promise<{ text: string; bytes: number } | null> => {
  const data = await readFile(join(dir, file.name));
  if (file.crc !== null && crc32(data) !== file.crc) return null;
  return { text: data.toString('utf8'), bytes: data.length };
};

/**
 * Reads a file back and compares it with what was written, 1 MiB at a time: a snapshot of a
 * busy store is tens of megabytes, whose checksum in one call held the event loop for ~40 ms
 * (and the whole file in memory at once).
 */
export const sameAsWritten = async (path: string, written: { bytes: number; crc: number }): Promise<boolean> => {
  const handle = await open(path, 'r');
  try {
    const chunk = Buffer.allocUnsafe(1 << 20);
    let bytes = 0;
    let crc = 0;
    for (;;) {
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      bytes += bytesRead;
      if (bytes > written.bytes) return false;
      crc = crc32(chunk.subarray(0, bytesRead), crc);
    }
    return bytes === written.bytes && crc === written.crc;
  } finally {
    await handle.close();
  }
};
