import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse, types } from 'hls-parser';
import { systemClock } from '../../platform/clock.js';
import { parseMediaPlaylist } from '../../platform/media/hls-media-playlist.js';
import { liveDir } from '../../platform/media/media-layout.js';
import { mediaRootOf } from '../../platform/media/media-root.js';
import { liveOutputArgs } from '../managed-slicers/live-profiles.test-support.js';
import { createTestApp, type TestApp } from '../../../test/helpers/test-app.js';
import { mediaToolsSkip } from '../../../test/helpers/media.js';
import { mediaUris, testEdge, variantUris, type TestEdge } from './testing/edge-test-kit.js';

const run = promisify(execFile);
const skip = await mediaToolsSkip();

/** H.264 profile_idc by the name ffprobe gives it. */
const PROFILE_IDC: Record<string, number> = { Baseline: 0x42, 'Constrained Baseline': 0x42, Main: 0x4d, High: 0x64 };
const hex2 = (n: number) => n.toString(16).padStart(2, '0');

/** What ffprobe says the window's streams are (init segment + first media segment), as RFC 6381 parts to compare with. */
async function probedStreams(dir: string, init: string, segment: string) {
  const joined = join(dir, '..', `probe-${Date.now()}.mp4`);
  await writeFile(joined, Buffer.concat([await readFile(join(dir, init)), await readFile(join(dir, segment))]));
  const { stdout } = await run('ffprobe', ['-v', 'error', '-show_streams', '-of', 'json', joined]);
  await rm(joined, { force: true });
  return (JSON.parse(stdout) as { streams: Array<{ codec_type: string; codec_name: string; profile?: string; level?: number; width?: number; height?: number; avg_frame_rate?: string }> }).streams;
}

/** The window's peak and average segment bitrate as the issue measures them: segment bytes × 8 / EXTINF. */
async function measured(dir: string, playlist: string) {
  const { init, segments } = parseMediaPlaylist(await readFile(join(dir, playlist), 'utf8'));
  const rates = await Promise.all(segments.map(async (s) => ({ bits: (await stat(join(dir, s.uri))).size * 8, durationS: s.durationS })));
  return {
    init: init as string,
    first: (segments[0] as { uri: string }).uri,
    peak: Math.max(...rates.map((r) => r.bits / r.durationS)),
    average: rates.reduce((sum, r) => sum + r.bits, 0) / rates.reduce((sum, r) => sum + r.durationS, 0),
  };
}

describe('live multivariant playlists describe a passthrough window (real ffmpeg, the slicer\'s passthrough arguments)', { skip }, () => {
  let t: TestApp;
  let edge: TestEdge;
  let work: string;
  let dir: string;
  const slicerId = 'c0dec5aa'.repeat(4);

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'playline-live-inf-'));
    edge = testEdge();
    t = await createTestApp({ clock: systemClock, overrides: { playbackEdge: edge.overrides } });
    // What an encoder pushes to the slicer (MPEG-TS, H.264 Main 3.1 + AAC-LC) with a bitrate that varies from segment to segment...
    const source = join(work, 'source.ts');
    await run('ffmpeg', [
      '-hide_banner', '-nostdin', '-loglevel', 'error',
      '-f', 'lavfi', '-i', 'testsrc2=size=640x360:rate=25,noise=alls=40:allf=t+u:enable=gte(t\\,6)', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000',
      '-t', '12', '-c:v', 'libx264', '-preset', 'veryfast', '-profile:v', 'main', '-level:v', '3.1', '-g', '50', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-f', 'mpegts', source,
    ]);
    // ...repackaged exactly as a passthrough slicer does, into the slicer's live directory.
    dir = liveDir(mediaRootOf(t.runtime.config), t.workspace.id, slicerId);
    mkdirSync(dir, { recursive: true });
    await run('ffmpeg', ['-hide_banner', '-nostdin', '-loglevel', 'error', '-i', source, ...liveOutputArgs('passthrough', { windowSegments: 5, preset: 'ultrafast' })], { cwd: dir });
  });

  after(async () => {
    await t?.close();
    await rm(work, { recursive: true, force: true });
  });

  /** The one variant of a multivariant playlist, parsed strictly, checked against the window's files and ffprobe. */
  const assertDescribes = async (text: string) => {
    const playlist = parse(text);
    assert.ok(playlist instanceof types.MasterPlaylist, 'a multivariant playlist');
    assert.equal(playlist.variants.length, 1);
    const variant = playlist.variants[0] as types.Variant;
    assert.ok(variant.codecs !== undefined, `CODECS is given: ${text}`);
    const window = await measured(dir, 'media_main.m3u8');
    const streams = await probedStreams(dir, window.init, window.first);
    const video = streams.find((s) => s.codec_type === 'video');
    const audio = streams.find((s) => s.codec_type === 'audio');
    assert.equal(video?.profile, 'Main');
    assert.equal(audio?.profile, 'LC');
    const [videoCodec, audioCodec, ...more] = (variant.codecs ?? '').split(',');
    assert.match(videoCodec ?? '', new RegExp(`^avc1\\.${hex2(PROFILE_IDC[video.profile] as number)}[0-9a-f]{2}${hex2(video.level ?? 0)}$`), `CODECS ${variant.codecs ?? '(none)'}`);
    assert.equal(audioCodec, 'mp4a.40.2');
    assert.deepEqual(more, []);
    assert.ok(variant.bandwidth >= window.peak, `BANDWIDTH ${variant.bandwidth} is at least the measured peak ${window.peak}`);
    assert.ok(variant.averageBandwidth !== undefined && Math.abs(variant.averageBandwidth - window.average) <= 1, `AVERAGE-BANDWIDTH ${variant.averageBandwidth} is the measured ${window.average}`);
    assert.ok(window.peak > window.average * 1.2, 'the window\'s bitrate varies: peak and average differ');
    assert.deepEqual(variant.resolution, { width: video.width, height: video.height });
    assert.equal(variant.frameRate, 25);
  };

  test('the edge\'s /play/event/<id>.m3u8 answer carries CODECS from the init segment and BANDWIDTH ≥ the window\'s peak', async () => {
    const url = t.client.playback.url(slicerId, { kind: 'event' });
    const answer = await t.app.inject({ method: 'GET', url });
    assert.equal(answer.statusCode, 200, answer.body);
    await assertDescribes(answer.body);
    // The session's playlists still play: the variant, its init and a segment.
    const variant = variantUris(url, answer.body)[0] as string;
    const media = await t.app.inject({ method: 'GET', url: variant });
    assert.equal(media.statusCode, 200, media.body);
    const { maps, segments } = mediaUris(variant, media.body);
    for (const path of [maps[0] as string, segments[0] as string]) assert.equal((await t.app.inject({ method: 'GET', url: path })).statusCode, 200, path);
  });

  test('HEAD on the live session\'s playlist and segment: 200, the GET headers, no body, no manifest or start', async () => {
    const url = t.client.playback.url(slicerId, { kind: 'event' });
    const answer = await t.app.inject({ method: 'GET', url });
    const variant = variantUris(url, answer.body)[0] as string;
    const before = edge.events.length;
    const headPlaylist = await t.app.inject({ method: 'HEAD', url: variant });
    assert.equal(headPlaylist.statusCode, 200);
    assert.equal(headPlaylist.body, '');
    assert.match(String(headPlaylist.headers['content-type']), /^application\/vnd\.apple\.mpegurl/);
    const media = await t.app.inject({ method: 'GET', url: variant });
    const segment = mediaUris(variant, media.body).segments[0] as string;
    const headSegment = await t.app.inject({ method: 'HEAD', url: segment });
    const getSegment = await t.app.inject({ method: 'GET', url: segment });
    assert.equal(headSegment.statusCode, 200);
    assert.equal(headSegment.body, '');
    assert.equal(headSegment.headers['content-length'], getSegment.headers['content-length']);
    assert.equal(headSegment.headers['content-type'], 'video/mp4');
    // Only the GETs count: one manifest (the GET of the variant), one start (the GET of the segment).
    assert.deepEqual(edge.events.slice(before).map((e) => e.type), ['manifest', 'start']);
  });

  test('the syndication hls pull URL serves the same described multivariant playlist', async () => {
    const target = await t.client.syndication.createTarget({ platform: 'Custom', target_protocol: 'hls' });
    const schedule = await t.client.syndication.createSchedule({ syndication_target_id: target.id, content_id: slicerId, content_type: 'e', region: 'us-west-2' });
    await t.client.syndication.scheduleAction(schedule.id, 'start');
    const pullUrl = (await t.client.syndication.getTarget(target.id)).target_stream ?? '';
    const path = new URL(pullUrl).pathname;
    const answer = await t.app.inject({ method: 'GET', url: path });
    assert.equal(answer.statusCode, 200, answer.body);
    await assertDescribes(answer.body);
    const media = await t.app.inject({ method: 'GET', url: variantUris(path, answer.body)[0] as string });
    assert.equal(media.statusCode, 200, 'its variant playlist resolves under the pull URL');
  });
});
