import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { decodeAmf0, encodeAmf0, type Amf0Value } from '../../platform/media/rtmp/amf0.js';
import { MSG_COMMAND_AMF0, MSG_SET_CHUNK_SIZE, RtmpChunkReader, RtmpChunkWriter, type RtmpMessage } from '../../platform/media/rtmp/rtmp-chunks.js';
import { startRtmpRelay } from './rtmp-relay.js';
import { createOutbound, type Destination } from '../../platform/net/outbound.js';
import { parseCallbackAllowList } from '../../platform/net/callback-allowlist.js';

// Every destination here listens on loopback; the test host names resolve there, and the allow-list admits it.
const outbound = createOutbound({ resolver: { resolve: async () => [{ address: '127.0.0.1', family: 4 }] }, allowList: parseCallbackAllowList('127.0.0.1/32') });
const admitted = async (host: string, port: number): Promise<Destination> => {
  const verdict = await outbound.admit(host, port);
  assert.ok(verdict.ok, 'the outbound guard admits the test destination');
  return verdict.destination;
};

const HANDSHAKE = 1 + 1536 + 1536;
const str = (value: string): Amf0Value => ({ type: 'string', value });
const num = (value: number): Amf0Value => ({ type: 'number', value });
const command = (values: Amf0Value[], csid = 3, streamId = 0): RtmpMessage => ({ chunkStreamId: csid, timestamp: 0, typeId: MSG_COMMAND_AMF0, streamId, payload: encodeAmf0(values) });

/** A destination that completes the handshake (S0 S1 S2 back) and records every message after it. */
async function recordingDestination(): Promise<{ server: Server; port: number; messages: RtmpMessage[]; handshakeBytes: () => number }> {
  const messages: RtmpMessage[] = [];
  let handshakeBytes = 0;
  const server = createServer((socket) => {
    const reader = new RtmpChunkReader();
    let seen = 0;
    socket.on('data', (data: Buffer) => {
      if (seen < HANDSHAKE) {
        const take = Math.min(HANDSHAKE - seen, data.length);
        if (seen === 0) socket.write(Buffer.concat([Buffer.from([3]), randomBytes(1536), data.subarray(1, 1537)]));
        seen += take;
        handshakeBytes = seen;
        data = data.subarray(take);
      }
      if (data.length > 0) messages.push(...reader.push(data));
    });
    socket.on('error', () => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, messages, handshakeBytes: () => handshakeBytes };
}

/** What ffmpeg does on the local side: handshake, then commands, with a chunk size change in between. */
async function publishThrough(url: string, messages: RtmpMessage[]): Promise<Socket> {
  const { port } = new URL(url.replace(/^rtmp/, 'http'));
  const socket = connect(Number(port), '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  socket.write(Buffer.concat([Buffer.from([3]), randomBytes(1536)]));
  let answered = 0;
  await new Promise<void>((resolve) =>
    socket.on('data', (data: Buffer) => {
      answered += data.length;
      if (answered >= 1 + 2 * 1536) resolve();
    }),
  );
  socket.write(randomBytes(1536));
  const writer = new RtmpChunkWriter();
  // Byte by byte in places: the relay must reassemble chunks whatever the TCP segmentation.
  const bytes = Buffer.concat(messages.map((m) => writer.write(m)));
  for (let i = 0; i < bytes.length; i += 7) socket.write(bytes.subarray(i, i + 7));
  return socket;
}

describe('RTMP loopback relay', () => {
  const closers: (() => unknown)[] = [];
  after(async () => {
    for (const close of closers) await close();
  });

  test('rewrites connect (app, tcUrl) and the stream name, re-chunks across a chunk size change, passes the handshake through', async () => {
    const destination = await recordingDestination();
    closers.push(() => destination.server.close());
    const relay = await startRtmpRelay({ tls: false, to: await admitted('ingest.example', destination.port), app: 'live2', streamName: 'sk_secret_key' }, outbound);
    closers.push(() => relay.close());
    assert.equal(relay.localUrl.includes('sk_secret_key'), false, 'the local URL holds no key');
    const localApp = relay.localUrl.split('/')[3] ?? '';
    const setChunk = Buffer.alloc(4);
    setChunk.writeUInt32BE(4096);
    const big = 'x'.repeat(5000);
    const socket = await publishThrough(relay.localUrl, [
      command([str('connect'), num(1), { type: 'object', value: [['app', str(localApp)], ['type', str('nonprivate')], ['tcUrl', str(`rtmp://127.0.0.1/${localApp}`)]] }]),
      { chunkStreamId: 2, timestamp: 0, typeId: MSG_SET_CHUNK_SIZE, streamId: 0, payload: setChunk },
      command([str('releaseStream'), num(2), { type: 'null' }, str('stream')]),
      command([str('FCPublish'), num(3), { type: 'null' }, str('stream')]),
      command([str('publish'), num(5), { type: 'null' }, str('stream'), str('live')], 8, 1),
      { chunkStreamId: 6, timestamp: 40, typeId: 9, streamId: 1, payload: Buffer.from(big) },
    ]);
    closers.push(() => socket.destroy());
    const deadline = Date.now() + 10_000;
    while (destination.messages.length < 6 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.equal(destination.handshakeBytes(), HANDSHAKE, 'C0 C1 C2 passed through');
    const commands = destination.messages.filter((m) => m.typeId === MSG_COMMAND_AMF0).map((m) => decodeAmf0(m.payload));
    const connectObject = commands[0]?.[2];
    assert.equal(connectObject?.type, 'object');
    const props = Object.fromEntries(connectObject.type === 'object' ? connectObject.value.map(([k, v]) => [k, v.type === 'string' ? v.value : v.type]) : []);
    assert.deepEqual(props, { app: 'live2', type: 'nonprivate', tcUrl: `rtmp://ingest.example:${destination.port}/live2` });
    assert.deepEqual(commands.slice(1).map((c) => [c[0]?.type === 'string' ? c[0].value : '', c[3]?.type === 'string' ? c[3].value : '']), [
      ['releaseStream', 'sk_secret_key'],
      ['FCPublish', 'sk_secret_key'],
      ['publish', 'sk_secret_key'],
    ]);
    const media = destination.messages.find((m) => m.typeId === 9);
    assert.equal(media?.payload.toString(), big, 'a message larger than a chunk arrives whole');
    assert.equal(media?.timestamp, 40);
    assert.equal(media?.streamId, 1);
  });

  test('a local client that names another application is cut off before anything reaches the destination', async () => {
    const destination = await recordingDestination();
    closers.push(() => destination.server.close());
    const relay = await startRtmpRelay({ tls: false, to: await admitted('127.0.0.1', destination.port), app: 'live', streamName: 'key' }, outbound);
    closers.push(() => relay.close());
    const socket = await publishThrough(relay.localUrl, [command([str('connect'), num(1), { type: 'object', value: [['app', str('guessed')]] }])]);
    await new Promise<void>((resolve) => socket.once('close', () => resolve()));
    assert.equal(destination.messages.length, 0);
    assert.match(relay.lastFailure ?? '', /not the publisher/);
  });

  /** A hostile destination: answers the handshake, then sends 16-byte Window Acknowledgement Size messages as fast as the socket takes them. */
  async function floodingDestination(): Promise<{ port: number; ended: Promise<void> }> {
    let floodEnded!: () => void;
    const ended = new Promise<void>((resolve) => (floodEnded = resolve));
    const hostile = createServer((socket) => {
      let seen = 0;
      const ack = new RtmpChunkWriter().write({ chunkStreamId: 2, timestamp: 0, typeId: 5, streamId: 0, payload: Buffer.from([0, 0x26, 0x25, 0xa0]) });
      const burst = Buffer.concat(Array.from({ length: 4096 }, () => ack));
      let closed = false;
      const flood = () => {
        while (!closed && socket.write(burst));
      };
      socket.on('drain', flood);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        closed = true;
        floodEnded();
      });
      socket.on('data', (data: Buffer) => {
        if (seen === 0) socket.write(Buffer.concat([Buffer.from([3]), randomBytes(1536), data.subarray(1, 1537)]));
        seen += data.length;
        if (seen >= HANDSHAKE) flood();
      });
    });
    await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve));
    closers.push(() => hostile.close());
    return { port: (hostile.address() as AddressInfo).port, ended };
  }

  const connectThrough = async (relayUrl: string) => {
    const localApp = relayUrl.split('/')[3] ?? '';
    const publisher = await publishThrough(relayUrl, [command([str('connect'), num(1), { type: 'object', value: [['app', str(localApp)]] }])]);
    publisher.on('error', () => undefined);
    closers.push(() => publisher.destroy());
    return publisher;
  };

  test('a destination that floods a publisher that reads nothing ends the push; the server holds no more than the cap (review N4)', { timeout: 30_000 }, async () => {
    const hostile = await floodingDestination();
    // A short stall limit: the publisher here reads nothing at all (ffmpeg reads one message per packet it sends).
    // The byte budget is set far above what the kernel's buffers take before the relay stops reading, so the stall
    // rule is the one that ends it (with the default 4 MiB budget a fast machine's loopback reached that first).
    const relay = await startRtmpRelay(
      { tls: false, to: await admitted('127.0.0.1', hostile.port), app: 'live', streamName: 'key' }, outbound,
      { maxStallMs: 300, maxDestinationBytesPerMinute: 64 * 1024 * 1024 },
    );
    closers.push(() => relay.close());
    const before = process.memoryUsage().rss;
    const publisher = await connectThrough(relay.localUrl);
    publisher.pause();
    let peak = before;
    const sample = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
    // The flood must be cut by the relay; without it, this would run until the deadline.
    const deadline = new Promise<void>((resolve) => setTimeout(resolve, 8_000).unref());
    await Promise.race([hostile.ended, deadline]);
    clearInterval(sample);
    peak = Math.max(peak, process.memoryUsage().rss);
    assert.ok(peak - before < 100 * 1024 * 1024, `server RSS grew by ${Math.round((peak - before) / 1048576)} MiB`);
    assert.match(relay.lastFailure ?? '', /the relay to the publisher: what was sent was not read for 0.3 s, the push was ended/);
  });

  test('a destination that floods a publisher that reads everything is cut at its budget of bytes per minute', { timeout: 30_000 }, async () => {
    const hostile = await floodingDestination();
    const relay = await startRtmpRelay({ tls: false, to: await admitted('127.0.0.1', hostile.port), app: 'live', streamName: 'key' }, outbound, { maxDestinationBytesPerMinute: 1024 * 1024 });
    closers.push(() => relay.close());
    const publisher = await connectThrough(relay.localUrl);
    let read = 0;
    publisher.on('data', (data: Buffer) => (read += data.length));
    await hostile.ended;
    assert.match(relay.lastFailure ?? '', /the destination sent more than 1 MiB in a minute/);
    assert.ok(read < 2 * 1024 * 1024, `the publisher got ${read} bytes`);
  });

  test('a destination that cannot be reached is the failure reason', async () => {
    const unused = createServer();
    await new Promise<void>((resolve) => unused.listen(0, '127.0.0.1', resolve));
    const port = (unused.address() as AddressInfo).port;
    await new Promise<void>((resolve) => unused.close(() => resolve()));
    const relay = await startRtmpRelay({ tls: false, to: await admitted('127.0.0.1', port), app: 'live', streamName: 'key' }, outbound);
    closers.push(() => relay.close());
    const { port: local } = new URL(relay.localUrl.replace(/^rtmp/, 'http'));
    const socket = connect(Number(local), '127.0.0.1');
    socket.on('error', () => undefined);
    socket.write(Buffer.concat([Buffer.from([3]), randomBytes(1536)]));
    await new Promise<void>((resolve) => socket.once('close', () => resolve()));
    assert.match(relay.lastFailure ?? '', /could not be reached \(ECONNREFUSED\)/);
  });
});
