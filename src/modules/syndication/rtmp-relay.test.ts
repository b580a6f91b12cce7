import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { decodeAmf0, encodeAmf0, type Amf0Value } from './amf0.js';
import { MSG_COMMAND_AMF0, MSG_SET_CHUNK_SIZE, RtmpChunkReader, RtmpChunkWriter, type RtmpMessage } from './rtmp-chunks.js';
import { startRtmpRelay } from './rtmp-relay.js';

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
    const relay = await startRtmpRelay({ tls: false, host: 'ingest.example', address: '127.0.0.1', port: destination.port, app: 'live2', streamName: 'sk_secret_key' });
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
    const relay = await startRtmpRelay({ tls: false, host: '127.0.0.1', address: '127.0.0.1', port: destination.port, app: 'live', streamName: 'key' });
    closers.push(() => relay.close());
    const socket = await publishThrough(relay.localUrl, [command([str('connect'), num(1), { type: 'object', value: [['app', str('guessed')]] }])]);
    await new Promise<void>((resolve) => socket.once('close', () => resolve()));
    assert.equal(destination.messages.length, 0);
    assert.match(relay.lastFailure ?? '', /not the publisher/);
  });

  test('a destination that cannot be reached is the failure reason', async () => {
    const unused = createServer();
    await new Promise<void>((resolve) => unused.listen(0, '127.0.0.1', resolve));
    const port = (unused.address() as AddressInfo).port;
    await new Promise<void>((resolve) => unused.close(() => resolve()));
    const relay = await startRtmpRelay({ tls: false, host: '127.0.0.1', address: '127.0.0.1', port, app: 'live', streamName: 'key' });
    closers.push(() => relay.close());
    const { port: local } = new URL(relay.localUrl.replace(/^rtmp/, 'http'));
    const socket = connect(Number(local), '127.0.0.1');
    socket.on('error', () => undefined);
    socket.write(Buffer.concat([Buffer.from([3]), randomBytes(1536)]));
    await new Promise<void>((resolve) => socket.once('close', () => resolve()));
    assert.match(relay.lastFailure ?? '', /could not be reached \(ECONNREFUSED\)/);
  });
});
