import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createCipheriv, createHash } from 'node:crypto';
import { CHECKED_BYTES, GRE_VSF, checkPlaintext, decryptPrefix, readGreHeader, ristAesKey } from './rist-packet.js';
import { CAPTURED_SECRET, KEYED_AES128, KEYED_AES256, PLAIN } from './rist-captures.test-support.js';

const verdictOf = (hex: string, secret: string) => {
  const datagram = Buffer.from(hex, 'hex');
  const header = readGreHeader(datagram);
  assert.ok(header, 'a GRE header');
  assert.ok(header.encrypted, 'encrypted');
  const plain = decryptPrefix(ristAesKey(secret, header.nonce, header.keyBits), header, datagram, CHECKED_BYTES);
  return checkPlaintext(header.protocol, plain, datagram.length - header.payloadOffset);
};

/** Deterministic noise: the same bytes on every run, so a test of random-looking input cannot flake. */
const noise = (seed: number, length: number): Buffer => {
  const parts: Buffer[] = [];
  for (let i = 0; parts.length * 32 < length; i++) parts.push(createHash('sha256').update(`${seed}/${i}`).digest());
  return Buffer.concat(parts).subarray(0, length);
};

describe('RIST main-profile datagrams (captured from ffmpeg/librist)', () => {
  test('a keyed sender\'s datagrams: GRE key and sequence bits, version 1, the nonce; every one decrypts to a RIST header under the secret (RTCP and MPEG-TS data)', () => {
    const headers = KEYED_AES128.map((hex) => readGreHeader(Buffer.from(hex, 'hex')));
    assert.deepEqual(headers.map((h) => [h?.protocol, h?.version, h?.keyBits, h?.encrypted, h?.seq]), KEYED_AES128.map((_, i) => [0x88b6, 1, 128, true, i]));
    assert.equal(new Set(headers.map((h) => h?.nonce.toString('hex'))).size, 1, 'one nonce');
    assert.deepEqual(KEYED_AES128.map((hex) => verdictOf(hex, CAPTURED_SECRET)), KEYED_AES128.map(() => 'proof'));
    // The data datagram decrypts to RTP of MPEG-TS: payload type 33, the TS sync byte after 12 bytes.
    const data = Buffer.from(KEYED_AES128[7] as string, 'hex');
    const header = readGreHeader(data);
    assert.ok(header);
    const plain = decryptPrefix(ristAesKey(CAPTURED_SECRET, header.nonce, 128), header, data, 32);
    assert.equal(plain[4], 0x80);
    assert.equal((plain[5] as number) & 0x7f, 33);
    assert.equal(plain[16], 0x47);
  });

  test('AES-256 (the H bit): the key size follows the header and every datagram proves the key', () => {
    assert.equal(readGreHeader(Buffer.from(KEYED_AES256[0] as string, 'hex'))?.keyBits, 256);
    assert.deepEqual(KEYED_AES256.map((hex) => verdictOf(hex, CAPTURED_SECRET)), KEYED_AES256.map(() => 'proof'));
  });

  test('the same datagrams under another secret (one character off, or another length) fail, every one', () => {
    for (const secret of ['captured-secret-0123456788', 'Captured-secret-0123456789', 'captured-secret', 'x'.repeat(32)]) {
      assert.deepEqual([...KEYED_AES128, ...KEYED_AES256].map((hex) => verdictOf(hex, secret)), [...KEYED_AES128, ...KEYED_AES256].map(() => 'fails'), secret);
    }
  });

  test('a sender without a secret: a GRE header with no key bit (not encrypted), the RTP in clear', () => {
    for (const hex of PLAIN) {
      const header = readGreHeader(Buffer.from(hex, 'hex'));
      assert.equal(header?.protocol, 0x88b6);
      assert.equal(header?.encrypted, false);
    }
  });

  test('a key bit without a sequence number is not encrypted (librist decrypts only with both: the IV is the sequence)', () => {
    const datagram = Buffer.from(KEYED_AES128[0] as string, 'hex');
    datagram[0] = 0x20;
    assert.equal(readGreHeader(datagram)?.encrypted, false);
  });

  test('not RIST: too short, routing or GRE version bits set', () => {
    assert.equal(readGreHeader(Buffer.from('3008', 'hex')), undefined);
    assert.equal(readGreHeader(Buffer.from('700888b6', 'hex')), undefined);
    assert.equal(readGreHeader(Buffer.from('300988b6', 'hex')), undefined);
    assert.equal(readGreHeader(Buffer.from('300888b6cc09', 'hex')), undefined, 'the nonce cut short');
  });

  test('2,000 forged datagrams with the key bit and noise as payload (an outsider guessing): none passes the check', () => {
    const key = ristAesKey(CAPTURED_SECRET, Buffer.from('01020304', 'hex'), 128);
    let passed = 0;
    for (let i = 0; i < 2000; i++) {
      const protocol = i % 2 === 0 ? 0x88b6 : GRE_VSF;
      const datagram = Buffer.concat([Buffer.from([0x30, 0x08, protocol >> 8, protocol & 0xff, 1, 2, 3, 4, 0, 0, i >> 8, i & 0xff]), noise(i, 40 + (i % 1300))]);
      const header = readGreHeader(datagram);
      assert.ok(header?.encrypted);
      if (checkPlaintext(protocol, decryptPrefix(key, header, datagram, CHECKED_BYTES), datagram.length - header.payloadOffset) === 'proof') passed++;
    }
    assert.equal(passed, 0);
  });

  test('GRE version 2 (VSF protocol type): the VSF header is checked after decryption; version 0 puts the sequence at the end of the IV', () => {
    const nonce = Buffer.from('0a0b0c0d', 'hex');
    const make = (version: number, protocol: number, plain: Buffer, seq: number): Buffer => {
      const iv = Buffer.alloc(16);
      iv.writeUInt32BE(seq, version >= 1 ? 0 : 12);
      const cipher = createCipheriv('aes-128-ctr', ristAesKey(CAPTURED_SECRET, nonce, 128), iv);
      const head = Buffer.from([0x30, version << 3, protocol >> 8, protocol & 0xff, ...nonce, 0, 0, 0, 0]);
      head.writeUInt32BE(seq, 8);
      return Buffer.concat([head, cipher.update(plain), cipher.final()]);
    };
    const rtcp = Buffer.from('8000079180c80006aabbccdd0000000000000000000000000000000000000000', 'hex');
    const vsfData = Buffer.concat([Buffer.from('00000000', 'hex'), Buffer.from('800107b080210000d5dbe6e9ba316310', 'hex'), Buffer.from([0x47, 0x40, 0, 0x10])]);
    const check = (datagram: Buffer, secret = CAPTURED_SECRET) => {
      const header = readGreHeader(datagram);
      assert.ok(header);
      return checkPlaintext(header.protocol, decryptPrefix(ristAesKey(secret, header.nonce, 128), header, datagram, CHECKED_BYTES), datagram.length - header.payloadOffset);
    };
    assert.equal(check(make(2, GRE_VSF, vsfData, 7)), 'proof');
    assert.equal(check(make(2, GRE_VSF, Buffer.from('0000800001020304050607080000', 'hex'), 8)), 'proof', 'a VSF keep-alive');
    assert.equal(check(make(2, GRE_VSF, Buffer.from('0001000001020304050607080000', 'hex'), 8)), 'fails', 'an unknown VSF protocol');
    assert.equal(check(make(2, GRE_VSF, vsfData, 7), 'another-secret-0123456789'), 'fails');
    assert.equal(check(make(0, 0x88b6, rtcp, 9)), 'proof', 'version 0');
    const shortCompound = Buffer.from(rtcp);
    shortCompound[7] = 5;
    assert.equal(check(make(1, 0x88b6, shortCompound, 9)), 'fails', 'RTCP lengths that do not add up to the datagram');
    assert.equal(check(make(1, 0x88b6, Buffer.concat([rtcp, Buffer.from('81ca0000', 'hex')]), 9)), 'proof', 'a compound of two');
    assert.equal(check(make(1, 0x88b5, Buffer.from('0102030405062400', 'hex'), 9)), 'neutral', 'a legacy keep-alive proves nothing');
  });
});
