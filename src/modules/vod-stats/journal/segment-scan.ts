import { decodeRecord, nextRecordAfter } from './journal-record.js';
import type { JournalBatch } from './journal.js';

/** Bytes of a segment no record could be read from, with the batches around them. */
export interface DamagedRange {
  offset: number;
  bytes: number;
  /** Seq of the last record before the range (0: none), and of the first after it (null: none). */
  seqBefore: number;
  seqAfter: number | null;
}

export interface SegmentScan {
  /** Where the last whole record ends. */
  end: number;
  /** Highest seq read. */
  maxSeq: number;
  /** Damaged ranges with whole records after them: skipped, the records after them read. */
  skipped: DamagedRange[];
  /** Bytes after the last whole record (a torn write on the last segment; damage on any other). */
  tail: DamagedRange | null;
}

/**
 * Reads every whole record of one segment file in order. A record that does not check out is
 * skipped alone: reading goes on at the next record marker whose record checks out (records of
 * earlier builds have no marker: the rest of their file is unreadable after damage).
 */
export async function scanSegment(file: Buffer, onRecord: (batch: JournalBatch) => void | Promise<void>): Promise<SegmentScan> {
  const scan: SegmentScan = { end: 0, maxSeq: 0, skipped: [], tail: null };
  let lastSeq = 0;
  for (let offset = 0; ; ) {
    const record = decodeRecord(file, offset);
    if ('end' in record) break;
    if ('damaged' in record) {
      const next = nextRecordAfter(file, offset);
      if (next === -1) {
        scan.tail = { offset, bytes: file.length - offset, seqBefore: lastSeq, seqAfter: null };
        break;
      }
      const after = decodeRecord(file, next);
      scan.skipped.push({ offset, bytes: next - offset, seqBefore: lastSeq, seqAfter: 'batch' in after ? after.batch.seq : null });
      offset = next;
      continue;
    }
    await onRecord(record.batch);
    lastSeq = record.batch.seq;
    scan.maxSeq = Math.max(scan.maxSeq, lastSeq);
    offset = scan.end = record.next;
  }
  return scan;
}
