import { afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket, type Socket } from 'node:dgram';
import { FakeClock } from '../../platform/clock.js';
import { eventually } from '../../../test/helpers/eventually.js';
import { startRistIngestFront, type RistIngestFront, type RistIngestLimits, type RistRefusal } from './rist-ingest-front.js';
import { CAPTURED_SECRET, KEYED_AES128, KEYED_AES256, PLAIN } from './rist-captures.test-support.js';

/**
 * The RIST front on loopback, fed the datagrams ffmpeg/librist really sends (captured): a
 * stand-in listener socket takes what the front forwards, and answers to see the relay back.
 */
const open: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const thing of open.splice(0)) await thing.close();
});

const udp = async (): Promise<Socket & { received: Buffer[]; senders: number[] }> => {
  const socket = Object.assign(createSocket('udp4'), { received: [] as Buffer[], senders: [] as number[] });
  socket.on('message', (m, from) => {
    socket.received.push(m);
    socket.senders.push(from.port);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  open.push(socket);
  return socket;
};

const setUp = async (limits: RistIngestLimits = {}, secret = CAPTURED_SECRET) => {
  const clock = new FakeClock();
  const refusals: RistRefusal[] = [];
  const admitted: string[] = [];
  const front: RistIngestFront = await startRistIngestFront({
    host: '127.0.0.1', port: 0, secret, clock, limits,
    onRefused: (r) => refusals.push(r), onAdmitted: (a) => admitted.push(a),
  });
  open.push(front);
  const listener = await udp();
  front.setTarget(listener.address().port);
  const sendAll = async (from: Socket, datagrams: readonly string[]) => {
    for (const hex of datagrams) await new Promise<void>((resolve) => from.send(Buffer.from(hex, 'hex'), front.port, '127.0.0.1', () => resolve()));
  };
  /** Waits until the front has looked at `n` datagrams in all (forwarded or dropped). */
  const seen = (n: number) => eventually(() => front.counts.received >= n, `${n} datagrams handled`);
  return { clock, front, listener, refusals, admitted, sendAll, seen };
};

describe('RIST ingest front', () => {
  test('a sender without a secret: nothing reaches the listener, however long it sends; told once as not_encrypted', async () => {
    const { front, listener, refusals, sendAll, seen } = await setUp();
    const outsider = await udp();
    for (let round = 0; round < 5; round++) await sendAll(outsider, PLAIN);
    await seen(5 * PLAIN.length);
    assert.equal(front.counts.dropped.not_encrypted, 5 * PLAIN.length);
    assert.equal(front.counts.forwarded, 0);
    assert.equal(listener.received.length, 0);
    assert.equal(front.admitted, undefined);
    assert.deepEqual(refusals.map((r) => [r.reason, r.remoteAddress]), [['not_encrypted', '127.0.0.1']]);
  });

  test('a sender with a wrong secret (librist\'s own datagrams, encrypted under another key): never admitted, dropped as bad_key', async () => {
    const { front, listener, refusals, sendAll, seen } = await setUp({}, 'another-secret-0123456789');
    const outsider = await udp();
    await sendAll(outsider, [...KEYED_AES128, ...KEYED_AES128]);
    await seen(2 * KEYED_AES128.length);
    assert.equal(front.counts.dropped.bad_key, 2 * KEYED_AES128.length);
    assert.equal(listener.received.length, 0);
    assert.deepEqual(refusals.map((r) => r.reason), ['bad_key']);
  });

  test('the keyed sender after an outsider: admitted after 3 proving datagrams, its first datagrams are handed on in order, the listener\'s answers go back to it only', async () => {
    const { front, listener, admitted, sendAll, seen } = await setUp();
    const outsider = await udp();
    await sendAll(outsider, PLAIN);
    const encoder = await udp();
    await sendAll(encoder, KEYED_AES128.slice(0, 2));
    await seen(PLAIN.length + 2);
    assert.equal(front.admitted, undefined, 'two proofs are not enough');
    await sendAll(encoder, KEYED_AES128.slice(2));
    await eventually(() => listener.received.length === KEYED_AES128.length, 'every keyed datagram reached the listener');
    assert.deepEqual(listener.received.map((m) => m.toString('hex')), [...KEYED_AES128]);
    assert.equal(front.admitted, `127.0.0.1:${encoder.address().port}`);
    assert.deepEqual(admitted, ['127.0.0.1']);
    // The listener answers whoever sent to it (the front's loopback socket for this sender).
    assert.equal(new Set(listener.senders).size, 1, 'one loopback socket per admitted sender');
    listener.send(Buffer.from('answer'), listener.senders[0] as number, '127.0.0.1');
    await eventually(() => encoder.received.some((m) => m.toString() === 'answer'), 'the answer reached the encoder');
    await sendAll(outsider, PLAIN);
    await seen(2 * PLAIN.length + KEYED_AES128.length);
    assert.equal(outsider.received.length, 0, 'the outsider gets nothing');
    // Plain datagrams from the admitted address and port (spoofed, or a sender that lost its key) are dropped too.
    await sendAll(encoder, PLAIN);
    await seen(3 * PLAIN.length + KEYED_AES128.length);
    assert.equal(listener.received.length, KEYED_AES128.length);
    assert.equal(front.counts.dropped.not_encrypted, 3 * PLAIN.length);
  });

  test('a second keyed sender waits while the first sends (busy); once the first has sent nothing that decrypts for idleMs, it takes over', async () => {
    const { clock, front, listener, refusals, sendAll, seen } = await setUp({ idleMs: 5_000 });
    const first = await udp();
    const second = await udp();
    await sendAll(first, KEYED_AES128);
    await eventually(() => front.admitted === `127.0.0.1:${first.address().port}`, 'the first admitted');
    await sendAll(second, KEYED_AES256);
    await seen(KEYED_AES128.length + KEYED_AES256.length);
    assert.equal(front.admitted, `127.0.0.1:${first.address().port}`);
    assert.ok(refusals.some((r) => r.reason === 'busy'));
    assert.equal(listener.received.length, KEYED_AES128.length, 'nothing of the second');
    clock.advance(4_999);
    await sendAll(second, KEYED_AES256.slice(0, 1));
    await seen(KEYED_AES128.length + KEYED_AES256.length + 1);
    assert.equal(front.admitted, `127.0.0.1:${first.address().port}`, 'not yet idle');
    clock.advance(1);
    await sendAll(second, KEYED_AES256.slice(1, 2));
    await eventually(() => front.admitted === `127.0.0.1:${second.address().port}`, 'the second took over');
  });

  test('bounds: datagrams a second per address before admission, key derivations a second, senders tracked', async () => {
    const { clock, front, sendAll, seen } = await setUp({ candidatePacketsPerSecond: 2, derivationsPerSecond: 1, maxPeers: 2 });
    const flooder = await udp();
    await sendAll(flooder, KEYED_AES128.slice(0, 5));
    await seen(5);
    assert.equal(front.counts.dropped.rate_limited, 3, 'the 3rd to 5th in the same second');
    assert.equal(front.admitted, undefined);
    // Another nonce (the AES-256 capture) needs a derivation: none is left this second.
    const other = await udp();
    await sendAll(other, KEYED_AES256.slice(0, 1));
    await seen(6);
    assert.equal(front.counts.dropped.rate_limited, 4);
    clock.advance(1000);
    await sendAll(other, KEYED_AES256.slice(0, 2));
    await seen(8);
    assert.equal(front.counts.dropped.rate_limited, 4, 'a new second, a new budget');
    // A third sender: the least recent is forgotten.
    const third = await udp();
    await sendAll(third, PLAIN.slice(0, 1));
    await seen(9);
    assert.equal(front.tracked, 2);
  });

  test('datagrams with nothing to check (legacy keep-alive type, which anyone can make) are neither held nor forwarded before admission', async () => {
    const { front, listener, sendAll, seen } = await setUp();
    const keyed = Buffer.from(KEYED_AES128[0] as string, 'hex');
    // The keyed sender's own nonce and a keep-alive protocol type, junk after it.
    const keepAlive = Buffer.concat([Buffer.from([0x30, 0x08, 0x88, 0xb5]), keyed.subarray(4, 8), Buffer.from('000000ff', 'hex'), Buffer.alloc(40, 7)]);
    const encoder = await udp();
    await sendAll(encoder, [keepAlive.toString('hex'), keepAlive.toString('hex'), ...KEYED_AES128]);
    await seen(2 + KEYED_AES128.length);
    await eventually(() => listener.received.length === KEYED_AES128.length, 'the keyed datagrams reached the listener');
    assert.deepEqual(listener.received.map((m) => m.toString('hex')), [...KEYED_AES128], 'and nothing else');
    assert.equal(front.tracked, 0, 'the admitted sender is no longer a candidate');
  });

  test('a target gone (between two runs of ffmpeg): the admitted sender\'s datagrams are dropped, not sent anywhere', async () => {
    const { front, listener, sendAll, seen } = await setUp();
    const encoder = await udp();
    front.setTarget(undefined);
    await sendAll(encoder, KEYED_AES128);
    await seen(KEYED_AES128.length);
    assert.equal(front.counts.dropped.no_listener, KEYED_AES128.length);
    assert.equal(listener.received.length, 0);
  });
});
