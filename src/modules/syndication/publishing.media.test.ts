import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { RtmpChunkWriter } from '../../platform/media/rtmp/rtmp-chunks.js';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { systemClock } from '../../platform/clock.js';
import { mediaRootOf } from '../../platform/media/media-root.js';
import { liveDir, livePlaylistPath } from '../../platform/media/media-layout.js';
import { parseMediaPlaylist } from '../../platform/media/hls-media-playlist.js';
import { createTestApp, type TestApp } from '../../../test/helpers/test-app.js';
import { eventually } from '../../../test/helpers/eventually.js';
import { mediaToolsSkip } from '../../../test/helpers/media.js';
import { exitedWithin, freePort, receiverListening, startReceiver, videoSeconds, type Receiver } from '../../../test/helpers/media-receiver.js';

const run = promisify(execFile);
const skip = await mediaToolsSkip();

describe('publishing pushes the live window to the target (real ffmpeg)', { skip }, () => {
  let t: TestApp;
  let dir: string;
  let live: ChildProcess;
  const slicerId = 'f00dfeed'.repeat(4);
  const logs: string[] = [];
  const responses: string[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'playline-publish-'));
    t = await createTestApp({
      clock: systemClock,
      env: {
        PLAYLINE_PUBLISHER: 'ffmpeg', PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32', PLAYLINE_LOG_LEVEL: 'debug',
        // One real slicer (hls push: it takes no ingest port) for publishing from what a slicer writes.
        PLAYLINE_SLICER_PROVISIONER: 'ffmpeg', PLAYLINE_PUBLIC_HOST: '127.0.0.1', PLAYLINE_REGIONS: 'us-west-2',
      },
      logDestination: { write: (line: string) => void logs.push(line) },
    });
    await eventually(() => t.runtime.assets.tools()?.available === true, 'ffmpeg was found');
    // The live window a managed slicer writes (produced here directly, not through a slicer).
    const playlist = livePlaylistPath(mediaRootOf(t.runtime.config), t.workspace.id, slicerId);
    mkdirSync(dirname(playlist), { recursive: true });
    live = spawn('ffmpeg', [
      '-hide_banner', '-nostdin', '-loglevel', 'error', '-re',
      '-f', 'lavfi', '-i', 'testsrc=size=320x180:rate=25', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000',
      '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '25', '-pix_fmt', 'yuv420p', '-c:a', 'aac',
      '-f', 'hls', '-hls_segment_type', 'fmp4', '-hls_time', '1', '-hls_list_size', '6', '-hls_flags', 'delete_segments', playlist,
    ], { stdio: 'ignore' });
    await eventually(() => existsSync(playlist) && (readFileSync(playlist, 'utf8').match(/#EXTINF/g) ?? []).length >= 3, 'the live window has three segments', 60_000);
  });

  after(async () => {
    live?.kill('SIGKILL');
    await t?.close();
    if (!process.env.KEEP) await rm(dir, { recursive: true, force: true });
  });

  const schedule = async (targetStream: string, protocol: 'rtmp' | 'srt') => {
    const target = await t.client.syndication.createTarget({ platform: 'Custom', target_protocol: protocol, target_stream: targetStream });
    const created = await t.client.syndication.createSchedule({ syndication_target_id: target.id, content_id: slicerId, content_type: 'e', region: 'us-west-2' });
    return { target, created };
  };
  const statusOf = async (targetId: string, scheduleId: string) => {
    const [target, sched] = await Promise.all([t.client.syndication.getTarget(targetId), t.client.syndication.getSchedule(scheduleId)]);
    responses.push(JSON.stringify(target), JSON.stringify(sched));
    return { target: target.status, schedule: sched.status, error: sched.error ?? null };
  };

  /** Everything a secret could leak through while a push runs: the process list, logs, responses. */
  const assertNoSecret = async (secrets: string[], receiver: Receiver, port: number) => {
    // Every process but the receiver, which stands in for the remote destination and was given the key.
    const { stdout: list } = await run('ps', ['-eo', 'pid=,args=']);
    const stdout = list.split('\n').filter((line) => Number(line.trim().split(/\s+/)[0]) !== receiver.child.pid).join('\n');
    assert.match(stdout, /ffmpeg .*-progress pipe:1 .*-i \S+index\.m3u8/, 'the push is in the process list');
    assert.equal(stdout.includes(`127.0.0.1:${port}`), false, "the destination's address is not on the command line either");
    for (const secret of secrets) {
      assert.equal(stdout.includes(secret), false, 'no secret on any command line');
      assert.equal(logs.some((line) => line.includes(secret)), false, 'no secret in a log line');
      assert.equal(responses.some((body) => body.includes(secret)), false, 'no secret in a response');
    }
  };

  const scenario = async (protocol: 'rtmp' | 'srt') => {
    const port = await freePort(protocol === 'srt' ? 'udp' : 'tcp');
    const key = `sk_${randomBytes(12).toString('hex')}`;
    const receiverInput =
      protocol === 'rtmp' ? ['-listen', '1', '-i', `rtmp://127.0.0.1:${port}/live/${key}`] : ['-i', `srt://127.0.0.1:${port}?mode=listener&passphrase=${key}`];
    const targetStream = protocol === 'rtmp' ? `rtmp://127.0.0.1:${port}/live/${key}` : `srt://127.0.0.1:${port}?passphrase=${key}`;
    const ext = protocol === 'rtmp' ? 'flv' : 'ts';

    let receiver = startReceiver(receiverInput, join(dir, `${protocol}-1.${ext}`));
    await receiverListening(protocol, port);
    const { target, created } = await schedule(targetStream, protocol);
    const started = await t.client.syndication.scheduleAction(created.id, 'start');
    responses.push(JSON.stringify(started));
    assert.equal(started.status, 'active', `started: ${started.error ?? ''}`);
    assert.deepEqual(await statusOf(target.id, created.id), { target: 'active', schedule: 'active', error: null });

    await eventually(() => receiver.outTimeUs() >= 5_500_000, 'the receiver recorded 5.5 s', 60_000);
    await assertNoSecret([key, targetStream], receiver, port);
    await receiver.kill();
    const recorded = await videoSeconds(join(dir, `${protocol}-1.${ext}`));
    assert.ok(recorded >= 5, `at least 5 s of video arrived (ffprobe): ${recorded} s`);

    let seen = await statusOf(target.id, created.id);
    await eventually(async () => (seen = await statusOf(target.id, created.id)).schedule === 'error', 'the schedule goes to error once the receiver is gone', 60_000);
    assert.equal(seen.target, 'error');
    assert.ok((seen.error ?? '').length > 0, 'the schedule says why');
    assert.equal((seen.error ?? '').includes(key), false);

    receiver = startReceiver(receiverInput, join(dir, `${protocol}-2.${ext}`));
    await eventually(async () => (seen = await statusOf(target.id, created.id)).schedule === 'active', 'a retry gets the stream accepted again', 90_000);
    assert.deepEqual(seen, { target: 'active', schedule: 'active', error: null });
    await eventually(() => receiver.outTimeUs() >= 1_000_000, 'the new receiver records', 60_000);
    await assertNoSecret([key, targetStream], receiver, port);

    const stopped = await t.client.syndication.scheduleAction(created.id, 'stop');
    assert.equal(stopped.status, 'stopped');
    assert.equal((await statusOf(target.id, created.id)).target, 'stopped');
    assert.equal(t.runtime.syndication.pushes?.stateOf(created.id), undefined, 'no push runs any more');
    const code = await exitedWithin(receiver, 30_000);
    assert.notEqual(code, 'running', 'the receiver saw the stream end');
    assert.ok((await videoSeconds(join(dir, `${protocol}-2.${ext}`))) > 0);
  };

  test('Custom RTMP: active once the receiver records, error when it goes away, active after a retry, stopped at stop; no secret leaks', async () => {
    await scenario('rtmp');
  });

  test('Custom SRT with a passphrase: the same, the passphrase reaching ffmpeg through a pipe', async () => {
    await scenario('srt');
  });

  test('Custom HLS push: playlists and segments are PUT with the credentials of the URL, which never reach ffmpeg', async () => {
    const secret = `pw${randomBytes(8).toString('hex')}`;
    const files = new Map<string, number>();
    let unauthorised = 0;
    const receiver = createHttpServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.headers.authorization !== `Basic ${Buffer.from(`pub:${secret}`).toString('base64')}`) {
          unauthorised += 1;
          return void res.writeHead(401).end();
        }
        if (req.method === 'PUT') files.set(req.url ?? '', Buffer.concat(chunks).length);
        res.writeHead(201).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const port = (receiver.address() as { port: number }).port;
    const targetStream = `http://pub:${secret}@127.0.0.1:${port}/ingest/`;
    const target = await t.client.syndication.createTarget({ platform: 'Custom', target_protocol: 'hls-push', target_stream: targetStream });
    const created = await t.client.syndication.createSchedule({ syndication_target_id: target.id, content_id: slicerId, content_type: 'e', region: 'us-west-2' });
    try {
      const started = await t.client.syndication.scheduleAction(created.id, 'start');
      responses.push(JSON.stringify(started));
      assert.equal(started.status, 'active', started.error ?? '');
      await eventually(() => files.has('/ingest/index.m3u8') && [...files.keys()].some((name) => name.endsWith('.ts')), 'the playlist and a segment arrived', 60_000);
      assert.equal(unauthorised, 0);
      const { stdout } = await run('ps', ['-eo', 'args=']);
      assert.match(stdout, /-method PUT/);
      assert.equal(stdout.includes(secret), false);
      assert.equal(stdout.includes(`127.0.0.1:${port}`), false, 'ffmpeg writes to the loopback relay, not to the destination');
      assert.equal(logs.some((line) => line.includes(secret)), false);
      assert.equal((await t.client.syndication.scheduleAction(created.id, 'stop')).status, 'stopped');
    } finally {
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
  });

  test('Custom HLS pull: once started, the target shows its pull URL, which serves the live window until the schedule stops', async () => {
    const target = await t.client.syndication.createTarget({ platform: 'Custom', target_protocol: 'hls' });
    const created = await t.client.syndication.createSchedule({ syndication_target_id: target.id, content_id: slicerId, content_type: 'e', region: 'us-west-2' });
    assert.equal((await t.client.syndication.scheduleAction(created.id, 'start')).status, 'active');
    const pullUrl = (await t.client.syndication.getTarget(target.id)).target_stream ?? '';
    const path = new URL(pullUrl).pathname;
    const playlist = await t.app.inject({ method: 'GET', url: path });
    assert.equal(playlist.statusCode, 200);
    assert.equal(playlist.headers['content-type'], 'application/vnd.apple.mpegurl');
    const segment = playlist.body.split('\n').find((line) => line.endsWith('.m4s'));
    assert.ok(segment, playlist.body);
    const bytes = await t.app.inject({ method: 'GET', url: path.replace(/playlist\.m3u8$/, segment) });
    assert.equal(bytes.statusCode, 200);
    assert.ok(bytes.rawPayload.length > 0);
    const forged = path.replace(/\/[0-9a-f]{32}\//, `/${'0'.repeat(32)}/`);
    assert.equal((await t.app.inject({ method: 'GET', url: forged })).statusCode, 404);
    assert.equal((await t.app.inject({ method: 'GET', url: path.replace('playlist.m3u8', '..%2Fsecret.key') })).statusCode, 404);
    await t.client.syndication.scheduleAction(created.id, 'stop');
    assert.equal((await t.app.inject({ method: 'GET', url: path })).statusCode, 404, 'nothing is served once the schedule stopped');
  });

  test('from an hls push slicer (passthrough: ffmpeg writes its index.m3u8 without a variant): an RTMP push delivers the media; the pull URL serves the window', { timeout: 150_000 }, async () => {
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    t.runtime.managedSlicers.listening(Number(new URL(address).port));
    const slicer = await t.client.managedSlicers.create({ name: 'Pushed', region: 'us-west-2', ingest_protocol: 'hls', output_profile: 'passthrough' });
    let ingestUrl: string | null | undefined;
    await eventually(async () => typeof (ingestUrl = (await t.client.managedSlicers.get(slicer.id)).ingest_url) === 'string', 'the slicer shows its ingest URL', 60_000);
    // The encoder PUTs MPEG-TS HLS to the slicer, whose ffmpeg copies it (stream copy of its HLS reader: no bit rate known).
    const encoder = spawn('ffmpeg', [
      '-hide_banner', '-nostdin', '-loglevel', 'quiet', '-re', '-f', 'lavfi', '-i', 'testsrc=size=160x90:rate=25', '-f', 'lavfi', '-i', 'sine=sample_rate=48000',
      '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-g', '25', '-c:a', 'aac', '-b:a', '64k',
      '-f', 'hls', '-hls_time', '1', '-hls_list_size', '4', '-hls_flags', 'delete_segments', '-method', 'PUT', ingestUrl as string,
    ], { stdio: 'ignore' });
    const window = liveDir(mediaRootOf(t.runtime.config), t.workspace.id, slicer.id);
    const port = await freePort('tcp');
    const key = `sk_${randomBytes(12).toString('hex')}`;
    const recording = join(dir, 'from-hls-push.flv');
    const receiver = startReceiver(['-listen', '1', '-i', `rtmp://127.0.0.1:${port}/live/${key}`], recording);
    const scheduled: string[] = [];
    try {
      const mediaPlaylist = join(window, 'media_main.m3u8');
      await eventually(() => existsSync(mediaPlaylist) && parseMediaPlaylist(readFileSync(mediaPlaylist, 'utf8')).segments.length >= 3, 'three segments in the live window', 60_000);
      await receiverListening('rtmp', port);
      const target = await t.client.syndication.createTarget({ platform: 'Custom', target_protocol: 'rtmp', target_stream: `rtmp://127.0.0.1:${port}/live/${key}` });
      const created = await t.client.syndication.createSchedule({ syndication_target_id: target.id, content_id: slicer.id, content_type: 'e', region: 'us-west-2' });
      scheduled.push(created.id);
      const started = await t.client.syndication.scheduleAction(created.id, 'start');
      assert.equal(started.status, 'active', `started: ${started.error ?? ''}`);
      await eventually(() => receiver.outTimeUs() >= 3_000_000, 'the receiver recorded 3 s', 60_000);
      assert.deepEqual(await statusOf(target.id, created.id), { target: 'active', schedule: 'active', error: null });
      await receiver.kill();
      const recorded = await videoSeconds(recording);
      assert.ok(recorded >= 2.5, `video arrived (ffprobe): ${recorded} s`);
      // On disk too, for every reader of the window: the variant ffmpeg left out, described.
      const onDisk = readFileSync(join(window, 'index.m3u8'), 'utf8');
      assert.match(onDisk, /^#EXT-X-STREAM-INF:BANDWIDTH=\d+,AVERAGE-BANDWIDTH=\d+,CODECS="avc1\.[0-9a-f]{6},mp4a\.40\.2",RESOLUTION=160x90,FRAME-RATE=25\.000\nmedia_main\.m3u8$/m, onDisk);

      const pull = await t.client.syndication.createTarget({ platform: 'Custom', target_protocol: 'hls' });
      const pulled = await t.client.syndication.createSchedule({ syndication_target_id: pull.id, content_id: slicer.id, content_type: 'e', region: 'us-west-2' });
      scheduled.push(pulled.id);
      assert.equal((await t.client.syndication.scheduleAction(pulled.id, 'start')).status, 'active');
      const path = new URL((await t.client.syndication.getTarget(pull.id)).target_stream ?? '').pathname;
      const multivariant = await t.app.inject({ method: 'GET', url: path });
      assert.equal(multivariant.statusCode, 200);
      assert.match(multivariant.body, /#EXT-X-STREAM-INF:BANDWIDTH=\d+,[^\n]*CODECS="avc1\.[0-9a-f]{6},mp4a\.40\.2"[^\n]*\nmedia_main\.m3u8\n/, multivariant.body);
      const media = await t.app.inject({ method: 'GET', url: path.replace(/playlist\.m3u8$/, 'media_main.m3u8') });
      assert.equal(media.statusCode, 200);
      const segment = parseMediaPlaylist(media.body).segments[0]?.uri;
      assert.ok(segment, media.body);
      const bytes = await t.app.inject({ method: 'GET', url: path.replace(/playlist\.m3u8$/, segment) });
      assert.equal(bytes.statusCode, 200);
      assert.ok(bytes.rawPayload.length > 0);
    } finally {
      for (const id of scheduled) await t.client.syndication.scheduleAction(id, 'stop');
      encoder.kill('SIGKILL');
      await receiver.kill();
      await t.client.managedSlicers.delete(slicer.id);
    }
  });

  const problem = (body: unknown) => (typeof body === 'string' ? JSON.parse(body) : body) as { code: string; detail: string };

  test('content that is not live is a clear error; zixi and integrated publishing are unavailable', async () => {
    const { created } = await schedule('rtmp://127.0.0.1:1935/live/key', 'rtmp');
    await t.client.syndication.updateSchedule(created.id, { content_id: 'no-such-slicer' });
    const notLive = await t.client.core.send('PATCH', `/api/v4/syndication-schedule-action/${created.id}`, { body: { mode: 'start' } });
    assert.equal(notLive.status, 409);
    assert.equal(problem(notLive.body).code, 'content_not_live');
    assert.equal((await t.client.syndication.getSchedule(created.id)).status, 'stopped');
    // A content id that is a path is no slicer id: never looked up on disk (and no 500).
    await t.client.syndication.updateSchedule(created.id, { content_id: `../${t.workspace.id}` });
    const pathLike = await t.client.core.send('PATCH', `/api/v4/syndication-schedule-action/${created.id}`, { body: { mode: 'start' } });
    assert.deepEqual([pathLike.status, problem(pathLike.body).code], [409, 'content_not_live']);

    const zixi = await t.client.syndication.createTarget({ platform: 'Pluto TV', target_protocol: 'zixi', platform_config: { host: 'zixi.example.com', port: 2088, password: 'pw-zixi-1', stream_id: 'sid-1' } });
    const onZixi = await t.client.syndication.createSchedule({ syndication_target_id: zixi.id, content_id: slicerId, content_type: 'e', region: 'us-west-2' });
    const refused = await t.client.core.send('PATCH', `/api/v4/syndication-schedule-action/${onZixi.id}`, { body: { mode: 'start' } });
    assert.equal(refused.status, 422);
    assert.equal(problem(refused.body).code, 'publishing_unavailable');
    assert.match(problem(refused.body).detail, /zixi/);
  });
  test('a hostile RTMP destination that floods small valid messages ends the push in error with the reason; the server holds no more than the cap (review N4)', { timeout: 60_000 }, async () => {
    // It answers the handshake, then sends 16-byte Window Acknowledgement Size messages as fast as the socket takes them.
    const ack = new RtmpChunkWriter().write({ chunkStreamId: 2, timestamp: 0, typeId: 5, streamId: 0, payload: Buffer.from([0, 0x26, 0x25, 0xa0]) });
    const burst = Buffer.concat(Array.from({ length: 4096 }, () => ack));
    const hostile = createNetServer((socket) => {
      let seen = 0;
      let closed = false;
      const flood = () => {
        while (!closed && socket.write(burst));
      };
      socket.on('drain', flood);
      socket.on('error', () => undefined);
      socket.on('close', () => (closed = true));
      socket.on('data', (data: Buffer) => {
        if (seen === 0) socket.write(Buffer.concat([Buffer.from([3]), randomBytes(1536), data.subarray(1, 1537)]));
        seen += data.length;
        if (seen >= 1 + 2 * 1536) flood();
      });
    });
    await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve));
    try {
      const port = (hostile.address() as AddressInfo).port;
      const before = process.memoryUsage().rss;
      let peak = before;
      const sample = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
      const { target, created } = await schedule(`rtmp://127.0.0.1:${port}/app/key`, 'rtmp');
      await t.client.syndication.scheduleAction(created.id, 'start');
      let status = await statusOf(target.id, created.id);
      await eventually(async () => {
        status = await statusOf(target.id, created.id);
        return status.schedule === 'error' && /the destination sent more than 4 MiB in a minute|was not read/.test(status.error ?? '');
      }, `the push ends in error with the relay's reason (last: ${JSON.stringify(status)})`, 40_000);
      clearInterval(sample);
      assert.equal(status.target, 'error');
      assert.ok(peak - before < 100 * 1024 * 1024, `server RSS grew by ${Math.round((peak - before) / 1048576)} MiB`);
      await t.client.syndication.scheduleAction(created.id, 'stop');
    } finally {
      hostile.close();
    }
  });
});
