import { createDecipheriv, pbkdf2Sync } from 'node:crypto';

/**
 * What a RIST main-profile datagram (librist, ffmpeg's default `rist_profile`) shows before and
 * after decryption with the slicer's secret. Read from librist's source (src/proto/gre.h, gre.c,
 * crypto/psk.c, rist-common.c) and confirmed on captured packets of ffmpeg 5.1 / librist 0.2.7:
 *
 *   GRE header: flags1 (C 0x80, K 0x20, S 0x10), flags2 (bits 3-5: RIST GRE version, bit 6 H:
 *   a 256-bit key), protocol type (16 bits); a checksum word if C; the 4-byte nonce if K; the
 *   32-bit sequence number if S. Everything after it is AES-CTR ciphertext when K is set, with
 *   key = PBKDF2-HMAC-SHA256(secret, salt = the 4 nonce bytes, 1024 iterations, 16 or 32 bytes)
 *   and IV = 16 bytes, zero but for the sequence number big-endian at byte 0 (GRE version >= 1)
 *   or byte 12 (version 0).
 *
 * Decrypted, a well-formed packet starts with a known header (the check below), so a wrong key
 * turns it into noise that fails the check: protocol 0x88B6 (reduced overhead): virtual source
 * and destination ports, then an RTP header (version 2) of MPEG-TS data (payload type 33, a TS
 * sync byte 0x47 after it) or an RTCP compound (packet types 200-206 whose lengths add up to the
 * datagram's); protocol 0xCCE0
 * (VSF, GRE version 2): 16 zero bits, a known subtype, then the reduced header. Keep-alives of
 * the older protocol type 0x88B5 hold a MAC address and JSON: nothing to check them by.
 */

export const GRE_REDUCED = 0x88b6;
export const GRE_KEEPALIVE = 0x88b5;
export const GRE_VSF = 0xcce0;
export const GRE_FULL = 0x0800;
export const PBKDF2_ITERATIONS = 1024;

export interface RistGreHeader {
  protocol: number;
  version: number;
  encrypted: boolean;
  keyBits: 128 | 256;
  /** The 4 nonce bytes, as sent (the PBKDF2 salt); empty when not encrypted. */
  nonce: Buffer;
  seq: number;
  /** Where the (encrypted) payload starts. */
  payloadOffset: number;
}

/** The GRE header of a main-profile datagram, or undefined when it is not one (too short, reserved bits set). */
export function readGreHeader(datagram: Buffer): RistGreHeader | undefined {
  if (datagram.length < 4) return undefined;
  const flags1 = datagram[0] as number;
  const flags2 = datagram[1] as number;
  // Routing bit and GRE version bits are zero in every RIST packet (librist drops the rest).
  if ((flags1 & 0x40) !== 0 || (flags2 & 0x07) !== 0) return undefined;
  const checksum = (flags1 & 0x80) !== 0;
  const encrypted = (flags1 & 0x20) !== 0;
  const hasSeq = (flags1 & 0x10) !== 0;
  let offset = 4 + (checksum ? 4 : 0);
  const nonce = encrypted ? datagram.subarray(offset, offset + 4) : Buffer.alloc(0);
  if (encrypted) offset += 4;
  const seq = hasSeq && datagram.length >= offset + 4 ? datagram.readUInt32BE(offset) : 0;
  if (hasSeq) offset += 4;
  if (datagram.length < offset) return undefined;
  return {
    protocol: datagram.readUInt16BE(2),
    version: (flags2 >> 3) & 0x07,
    // librist decrypts only what carries both the nonce and the sequence number (the IV).
    encrypted: encrypted && hasSeq,
    keyBits: (flags2 & 0x40) !== 0 && (flags2 & 0x38) !== 0 ? 256 : 128,
    nonce,
    seq,
    payloadOffset: offset,
  };
}

/** The AES key for one nonce: PBKDF2-HMAC-SHA256 of the secret salted with the nonce (about a millisecond: callers budget it). */
export const ristAesKey = (secret: string, nonce: Buffer, keyBits: 128 | 256): Buffer => pbkdf2Sync(secret, nonce, PBKDF2_ITERATIONS, keyBits / 8, 'sha256');

/** The first `length` bytes of a payload, decrypted (AES-CTR, librist's IV). */
export function decryptPrefix(key: Buffer, header: RistGreHeader, datagram: Buffer, length: number): Buffer {
  const iv = Buffer.alloc(16);
  iv.writeUInt32BE(header.seq, header.version >= 1 ? 0 : 12);
  const decipher = createDecipheriv(key.length === 32 ? 'aes-256-ctr' : 'aes-128-ctr', key, iv);
  const body = datagram.subarray(header.payloadOffset, header.payloadOffset + length);
  return Buffer.concat([decipher.update(body), decipher.final()]);
}

/** How many decrypted bytes `checkPlaintext` reads at most. */
export const CHECKED_BYTES = 4 + 4 + 12 + 15 * 4 + 4 + 255 * 4 + 1;

/**
 * What a decrypted payload proves: `proof` a known RIST header (only the key makes it), `neutral`
 * a packet with nothing to check (legacy keep-alive, full-IP tunnel), `fails` noise (a wrong key).
 */
export type PlaintextVerdict = 'proof' | 'neutral' | 'fails';

export function checkPlaintext(protocol: number, plain: Buffer, payloadLength: number): PlaintextVerdict {
  if (protocol === GRE_REDUCED) return checkReduced(plain, 0, payloadLength);
  if (protocol === GRE_VSF) {
    if (plain.length < 4 || plain.readUInt16BE(0) !== 0) return 'fails';
    const subtype = plain.readUInt16BE(2);
    if (subtype === 0) return checkReduced(plain, 4, payloadLength);
    // Keep-alive, future nonce, buffer negotiation: 32 known bits.
    return subtype >= 0x8000 && subtype <= 0x8002 ? 'proof' : 'fails';
  }
  if (protocol === GRE_KEEPALIVE || protocol === GRE_FULL) return 'neutral';
  return 'fails';
}

/** Reduced-overhead header (4 bytes of virtual ports) and the RTP or RTCP header after it. */
function checkReduced(plain: Buffer, at: number, payloadLength: number): PlaintextVerdict {
  const rtp = at + 4;
  if (plain.length < rtp + 8) return 'fails';
  const first = plain[rtp] as number;
  if ((first & 0xc0) !== 0x80) return 'fails';
  const type = plain[rtp + 1] as number;
  if (type >= 200 && type <= 206) return checkRtcp(plain, rtp, payloadLength);
  // RTP: MPEG-TS payload (type 33, marker bit aside), whose first byte is the TS sync byte.
  if ((type & 0x7f) !== 33) return 'fails';
  let payload = rtp + 12 + (first & 0x0f) * 4;
  if ((first & 0x10) !== 0) {
    if (plain.length < payload + 4) return 'fails';
    payload += 4 + plain.readUInt16BE(payload + 2) * 4;
  }
  if (payload >= payloadLength) return 'fails';
  return plain.length > payload && plain[payload] === 0x47 ? 'proof' : 'fails';
}

/**
 * RTCP: a compound of packets (version 2, types 200-206), each length (32-bit words minus one)
 * leading to the next, the last ending exactly at the end of the datagram, as librist sends them
 * (sender report or receiver report, SDES, echo). A compound longer than the decrypted prefix
 * proves nothing (`neutral`).
 */
function checkRtcp(plain: Buffer, from: number, payloadLength: number): PlaintextVerdict {
  let at = from;
  while (at < payloadLength) {
    if (at + 4 > plain.length) return 'neutral';
    const type = plain[at + 1] as number;
    if (((plain[at] as number) & 0xc0) !== 0x80 || type < 200 || type > 206) return 'fails';
    at += (plain.readUInt16BE(at + 2) + 1) * 4;
  }
  return at === payloadLength ? 'proof' : 'fails';
}
