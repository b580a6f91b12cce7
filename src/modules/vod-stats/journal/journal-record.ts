import { crc32 } from 'node:zlib';
import type { JournalBatch } from './journal.js';

/**
 * On-disk record of one batch, little endian, version 2 (written):
 *   u32 MAGIC | u32 payload length | u32 crc32(length field ‖ payload) | payload
 *   payload = u8 version (2) | u8 kind (0 ndjson, 1 json) | u8 flags (1 = any owner) | u8 0
 *           | f64 seq | f64 receivedAt | u16 length + auth owner (UTF-8)
 *           | u32 owner count + (u16 length + owner (UTF-8))... | body
 * Each record carries its own length and checksum, and the magic marker lets a reader find the
 * next record after damaged bytes (a candidate counts only if its checksum holds).
 *
 * Version 1 (read only, from earlier builds): u32 length | u32 crc32(payload) | payload, payload =
 * u8 1 | u8 kind | u8 flags (1 = any owner, else the signing workspace only) | u8 0 | f64 seq
 * | f64 receivedAt | u16 length + owner | body. It has no marker: after damage, nothing more of
 * its file can be read.
 */
const MAGIC = Buffer.from([0xff, 0x50, 0x4c, 0x32]); // never in UTF-8 text; as a v1 length, far past the maximum
const HEADER = 12;
const FIXED = 22;
const V1_HEADER = 8;
/** Larger than any body the API accepts (16 MiB) plus what a record adds: anything bigger is damage. */
const MAX_PAYLOAD = 32 * 1024 * 1024;

/** The record as two buffers (headers, body) so the body is written without a copy. */
export const encodeRecord = (batch: JournalBatch): Buffer[] => {
  const authOwner = Buffer.from(batch.authOwner, 'utf8');
  const owners = (batch.owners ?? []).map((o) => Buffer.from(o, 'utf8'));
  const ownersBytes = owners.reduce((n, o) => n + 2 + o.length, 4);
  const head = Buffer.allocUnsafe(HEADER + FIXED + authOwner.length + ownersBytes);
  MAGIC.copy(head, 0);
  let at = HEADER;
  head.writeUInt8(2, at);
  head.writeUInt8(batch.kind === 'json' ? 1 : 0, at + 1);
  head.writeUInt8(batch.owners === null ? 1 : 0, at + 2);
  head.writeUInt8(0, at + 3);
  head.writeDoubleLE(batch.seq, at + 4);
  head.writeDoubleLE(batch.receivedAt, at + 12);
  head.writeUInt16LE(authOwner.length, at + 20);
  at += FIXED;
  at += authOwner.copy(head, at);
  head.writeUInt32LE(owners.length, at);
  at += 4;
  for (const owner of owners) {
    head.writeUInt16LE(owner.length, at);
    at += 2 + owner.copy(head, at + 2);
  }
  head.writeUInt32LE(head.length - HEADER + batch.body.length, 4);
  head.writeUInt32LE(crc32(batch.body, crc32(head.subarray(HEADER), crc32(head.subarray(4, 8)))), 8);
  return [head, batch.body];
};

export type DecodeResult = { batch: JournalBatch; next: number } | { damaged: true } | { end: true };
const DAMAGED: DecodeResult = { damaged: true };

/** Reads the strings of a version 2 payload; null when they do not fit it. */
const readOwners = (payload: Buffer): { authOwner: string; owners: string[]; bodyAt: number } | null => {
  let at = FIXED;
  const authLength = payload.readUInt16LE(20);
  if (at + authLength + 4 > payload.length) return null;
  const authOwner = payload.toString('utf8', at, at + authLength);
  at += authLength;
  const count = payload.readUInt32LE(at);
  at += 4;
  const owners: string[] = [];
  for (let i = 0; i < count; i++) {
    if (at + 2 > payload.length) return null;
    const length = payload.readUInt16LE(at);
    if (at + 2 + length > payload.length) return null;
    owners.push(payload.toString('utf8', at + 2, at + 2 + length));
    at += 2 + length;
  }
  return { authOwner, owners, bodyAt: at };
};

const decodeV2 = (file: Buffer, offset: number): DecodeResult => {
  if (offset + HEADER > file.length) return DAMAGED;
  const length = file.readUInt32LE(offset + 4);
  if (length < FIXED + 4 || length > MAX_PAYLOAD || offset + HEADER + length > file.length) return DAMAGED;
  const payload = file.subarray(offset + HEADER, offset + HEADER + length);
  if (crc32(payload, crc32(file.subarray(offset + 4, offset + 8))) !== file.readUInt32LE(offset + 8)) return DAMAGED;
  if (payload.readUInt8(0) !== 2) return DAMAGED;
  const strings = readOwners(payload);
  if (strings === null) return DAMAGED;
  return {
    batch: {
      seq: payload.readDoubleLE(4),
      receivedAt: payload.readDoubleLE(12),
      kind: payload.readUInt8(1) === 1 ? 'json' : 'ndjson',
      authOwner: strings.authOwner,
      owners: (payload.readUInt8(2) & 1) === 1 ? null : strings.owners,
      body: payload.subarray(strings.bodyAt),
    },
    next: offset + HEADER + length,
  };
};

const decodeV1 = (file: Buffer, offset: number): DecodeResult => {
  if (offset + V1_HEADER > file.length) return DAMAGED;
  const length = file.readUInt32LE(offset);
  if (length < FIXED || length > MAX_PAYLOAD || offset + V1_HEADER + length > file.length) return DAMAGED;
  const payload = file.subarray(offset + V1_HEADER, offset + V1_HEADER + length);
  if (crc32(payload) !== file.readUInt32LE(offset + 4) || payload.readUInt8(0) !== 1) return DAMAGED;
  const ownerLength = payload.readUInt16LE(20);
  if (FIXED + ownerLength > length) return DAMAGED;
  const authOwner = payload.toString('utf8', FIXED, FIXED + ownerLength);
  return {
    batch: {
      seq: payload.readDoubleLE(4),
      receivedAt: payload.readDoubleLE(12),
      kind: payload.readUInt8(1) === 1 ? 'json' : 'ndjson',
      authOwner,
      owners: payload.readUInt8(2) === 1 ? null : [authOwner],
      body: payload.subarray(FIXED + ownerLength),
    },
    next: offset + V1_HEADER + length,
  };
};

/** Decodes the record at `offset` of `file` (either version). */
export const decodeRecord = (file: Buffer, offset: number): DecodeResult => {
  if (offset === file.length) return { end: true };
  const marked = offset + 4 <= file.length && file.compare(MAGIC, 0, 4, offset, offset + 4) === 0;
  return marked ? decodeV2(file, offset) : decodeV1(file, offset);
};

/** The offset of the next whole record after `from` (a marker whose record checks out), or -1. */
export const nextRecordAfter = (file: Buffer, from: number): number => {
  for (let at = file.indexOf(MAGIC, from + 1); at !== -1; at = file.indexOf(MAGIC, at + 1)) {
    if ('batch' in decodeV2(file, at)) return at;
  }
  return -1;
};
