import { crc32 } from 'node:zlib';
import type { JournalBatch } from './journal.js';

/**
 * On-disk record of one batch, little endian:
 *   u32 payload length | u32 crc32(payload) | payload
 *   payload = u8 version (1) | u8 kind (0 ndjson, 1 json) | u8 flags (1 = anyOwner) | u8 0
 *           | f64 seq | f64 receivedAt | u16 owner length | owner (UTF-8) | body
 * A crash mid-write leaves a short or mismatching last record; decoding stops there.
 * Version 1 records the batch's owners as one flag: any workspace, or the signing one only.
 */
const FRAME_HEADER = 8;
const FIXED_PAYLOAD = 22;
const VERSION = 1;
/** Larger than any body the API accepts (16 MiB) plus headers: anything bigger is damage. */
const MAX_PAYLOAD = 17 * 1024 * 1024;

/** The record as two buffers (headers, body) so the body is written without a copy. */
export const encodeRecord = (batch: JournalBatch): Buffer[] => {
  const owners = batch.owners;
  const anyOwner = owners === null;
  if (owners !== null && (owners.length !== 1 || owners[0] !== batch.authOwner)) {
    throw new Error('journal record version 1 holds any owner or the signing workspace only');
  }
  const owner = Buffer.from(batch.authOwner, 'utf8');
  const head = Buffer.allocUnsafe(FRAME_HEADER + FIXED_PAYLOAD + owner.length);
  head.writeUInt8(VERSION, 8);
  head.writeUInt8(batch.kind === 'json' ? 1 : 0, 9);
  head.writeUInt8(anyOwner ? 1 : 0, 10);
  head.writeUInt8(0, 11);
  head.writeDoubleLE(batch.seq, 12);
  head.writeDoubleLE(batch.receivedAt, 20);
  head.writeUInt16LE(owner.length, 28);
  owner.copy(head, 30);
  const payloadLength = head.length - FRAME_HEADER + batch.body.length;
  head.writeUInt32LE(payloadLength, 0);
  head.writeUInt32LE(crc32(batch.body, crc32(head.subarray(FRAME_HEADER))), 4);
  return [head, batch.body];
};

export type DecodeResult = { batch: JournalBatch; next: number } | { damaged: true } | { end: true };

/** Decodes the record at `offset` of `file`. */
export const decodeRecord = (file: Buffer, offset: number): DecodeResult => {
  if (offset === file.length) return { end: true };
  if (offset + FRAME_HEADER > file.length) return { damaged: true };
  const length = file.readUInt32LE(offset);
  if (length < FIXED_PAYLOAD || length > MAX_PAYLOAD || offset + FRAME_HEADER + length > file.length) {
    return { damaged: true };
  }
  const payload = file.subarray(offset + FRAME_HEADER, offset + FRAME_HEADER + length);
  if (crc32(payload) !== file.readUInt32LE(offset + 4) || payload.readUInt8(0) !== VERSION) return { damaged: true };
  const ownerLength = payload.readUInt16LE(20);
  if (FIXED_PAYLOAD + ownerLength > length) return { damaged: true };
  const authOwner = payload.toString('utf8', FIXED_PAYLOAD, FIXED_PAYLOAD + ownerLength);
  return {
    batch: {
      kind: payload.readUInt8(1) === 1 ? 'json' : 'ndjson',
      owners: payload.readUInt8(2) === 1 ? null : [authOwner],
      seq: payload.readDoubleLE(4),
      receivedAt: payload.readDoubleLE(12),
      authOwner,
      body: payload.subarray(FIXED_PAYLOAD + ownerLength),
    },
    next: offset + FRAME_HEADER + length,
  };
};
