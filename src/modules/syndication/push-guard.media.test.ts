import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { mkdirSync } from 'node:fs';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import { systemClock } from '../../platform/clock.js';
import { mediaRootOf } from '../../platform/media/media-root.js';
import { livePlaylistPath } from '../../platform/media/media-layout.js';
import { createTestApp, type TestApp } from '../../../test/helpers/test-app.js';
import { mediaToolsSkip } from '../../../test/helpers/media.js';

const run = promisify(execFile);
const skip = await mediaToolsSkip();

/**
 * The outbound guard on the push path, looked at from outside the module: the runtime is built
 * from config as production builds it (real ffmpeg publisher, the outbound layer created from
 * PLAYLINE_OUTBOUND_ALLOWLIST, which here admits nothing), a live window exists, and schedules
 * push to destinations the guard must refuse. A loopback listener stands where the destination
 * is: if anything in the process (the relay, ffmpeg) connected to it, the guard was skipped.
 * This is the review's mutation M8 (the publisher given an always-yes address check), which
 * every earlier test let through.
 */
describe('pushes to refused destinations never connect (M8, through the runtime)', { skip }, () => {
  let t: TestApp;
  let tcp: Server;
  let udp: UdpSocket;
  const accepted: Socket[] = [];
  let datagrams = 0;
  const contentId = 'dec0ded0'.repeat(4);

  before(async () => {
    t = await createTestApp({
      clock: systemClock,
      // No allow-list: loopback, private ranges and metadata are all refused, as in production.
      env: { PLAYLINE_PUBLISHER: 'ffmpeg', PLAYLINE_REGIONS: 'us-west-2' },
    });
    // A live window for the content (what a slicer writes), so a push gets as far as its destination.
    const playlist = livePlaylistPath(mediaRootOf(t.runtime.config), t.workspace.id, contentId);
    mkdirSync(dirname(playlist), { recursive: true });
    await run('ffmpeg', [
      '-hide_banner', '-nostdin', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc=size=160x90:rate=10:duration=3', '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '10', '-pix_fmt', 'yuv420p',
      '-f', 'hls', '-hls_segment_type', 'fmp4', '-hls_time', '1', '-hls_list_size', '0', playlist,
    ]);
    tcp = createServer((socket) => {
      accepted.push(socket);
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
    udp = createSocket('udp4');
    udp.on('message', () => void (datagrams += 1));
    await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve));
  });

  after(async () => {
    for (const socket of accepted) socket.destroy();
    await new Promise<void>((resolve) => tcp?.close(() => resolve()));
    await new Promise<void>((resolve) => (udp ? udp.close(() => resolve()) : resolve()));
    await t?.close();
  });

  const push = async (protocol: 'rtmp' | 'srt' | 'hls-push', targetStream: string) => {
    const target = await t.client.syndication.createTarget({ platform: 'Custom', target_protocol: protocol, target_stream: targetStream });
    const created = await t.client.syndication.createSchedule({ syndication_target_id: target.id, content_id: contentId, content_type: 'e', region: 'us-west-2' });
    const started = await t.client.syndication.scheduleAction(created.id, 'start');
    const schedule = await t.client.syndication.getSchedule(created.id);
    return { started, schedule, running: t.runtime.syndication.pushes?.stateOf(created.id) };
  };

  const assertRefused = (result: Awaited<ReturnType<typeof push>>, where: string, why: RegExp) => {
    assert.equal(result.started.status, 'error', `the start ends in error: ${JSON.stringify(result.started)}`);
    assert.equal(result.schedule.status, 'error');
    assert.match(result.schedule.error ?? '', new RegExp(`not allowed to connect to ${where.replace(/[.[\]]/g, '\\$&')}`));
    assert.match(result.schedule.error ?? '', why);
    assert.equal(result.running, undefined, 'no push is left running or retrying');
  };

  test('rtmp to 127.0.0.1 (loopback, not allow-listed): refused, and the listener there sees no connection', async () => {
    const { port } = tcp.address() as AddressInfo;
    const result = await push('rtmp', `rtmp://127.0.0.1:${port}/live/sk_secret`);
    assert.equal(accepted.length, 0, 'nothing connected to the loopback destination');
    assertRefused(result, `127.0.0.1:${port}`, /loopback/);
  });

  test('hls-push to 127.0.0.1: refused, and the listener sees no connection', async () => {
    const { port } = tcp.address() as AddressInfo;
    const result = await push('hls-push', `http://127.0.0.1:${port}/ingest/`);
    assert.equal(accepted.length, 0, 'nothing connected to the loopback destination');
    assertRefused(result, `127.0.0.1:${port}`, /loopback/);
  });

  test('srt to 127.0.0.1: refused, and the UDP listener receives no datagram', async () => {
    const { port } = udp.address();
    const result = await push('srt', `srt://127.0.0.1:${port}?passphrase=0123456789abcdef`);
    assert.equal(datagrams, 0, 'nothing was sent to the loopback destination');
    assertRefused(result, `127.0.0.1:${port}`, /loopback/);
  });

  test('rtmp to the cloud metadata address and to a private range: refused with the reason', async () => {
    assertRefused(await push('rtmp', 'rtmp://169.254.169.254:1935/live/key'), '169.254.169.254:1935', /metadata/);
    assertRefused(await push('rtmp', 'rtmp://10.20.30.40:1935/live/key'), '10.20.30.40:1935', /private/);
    assert.equal(accepted.length, 0);
  });
});
