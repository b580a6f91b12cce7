import { mediaRootOf } from '../../platform/media/media-root.js';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parse, types } from 'hls-parser';
import { createTestApp, type TestApp } from '../../../test/helpers/test-app.js';
import type { FakeClock } from '../../platform/clock.js';
import { mediaUris, testEdge, variantUris, type TestEdge } from './testing/edge-test-kit.js';
import { writeFakeAsset } from './testing/media-fixtures.js';

/** Plays like a player: the multivariant playlist, the first variant, then the first `segments` media segments. */
async function playLikeAPlayer(t: TestApp, url: string, o: { segments?: number; pauseMs?: number } = {}) {
  const multivariant = await t.app.inject({ method: 'GET', url });
  assert.equal(multivariant.statusCode, 200, multivariant.body);
  const variant = variantUris(url, multivariant.body)[0] as string;
  if (o.pauseMs) (t.clock as FakeClock).advance(o.pauseMs);
  const playlist = await t.app.inject({ method: 'GET', url: variant });
  assert.equal(playlist.statusCode, 200, playlist.body);
  const { maps, segments } = mediaUris(variant, playlist.body);
  const fetched = [];
  for (const path of [maps[0] as string, ...segments.slice(0, o.segments ?? 1)]) {
    const response = await t.app.inject({ method: 'GET', url: path });
    assert.equal(response.statusCode, 200, `${path}: ${response.body}`);
    fetched.push(path);
  }
  return { response: multivariant, multivariant: multivariant.body, variant, playlist: playlist.body, maps, segments, fetched };
}

describe('playback edge: valid playbacks of packaged assets', () => {
  let t: TestApp;
  let edge: TestEdge;
  let root: string;
  before(async () => {
    edge = testEdge({ stepMs: 0.75 });
    t = await createTestApp({ overrides: { playbackEdge: edge.overrides } });
    root = mediaRootOf(t.runtime.config);
    for (const id of ['movie-1', 'movie-2', 'movie-3', 'movie-ad']) await writeFakeAsset(root, t.workspace.id, id);
    await writeFakeAsset(root, t.workspace.id, 'ad-15s', { durations: [4, 4, 4, 3], renditions: [{ name: 'ad-sd', width: 640, height: 360, bandwidth: 800_000 }] });
  });
  after(() => t.close());

  test('a signed URL gets a multivariant playlist; the player\'s first variant and segment count manifest (latency since the request) and new', async () => {
    for (let i = 0; i < 3; i++) {
      const { response } = await playLikeAPlayer(t, t.client.playback.url('movie-1'), { pauseMs: 20 + 10 * i, segments: 3 });
      assert.match(String(response.headers['content-type']), /^application\/vnd\.apple\.mpegurl/);
      assert.equal(response.headers['cache-control'], 'no-store');
      const multivariant = parse(response.body);
      assert.ok(multivariant instanceof types.MasterPlaylist);
      assert.deepEqual(multivariant.variants.map((v) => [v.bandwidth, v.resolution?.height, v.codecs]), [[900_000, 360, 'avc1.64001f,mp4a.40.2'], [300_000, 180, 'avc1.64001f,mp4a.40.2']]);
    }
    assert.deepEqual(edge.events.slice(0, 3).map((e) => e.type), ['request', 'manifest', 'start']);
    await t.runtime.playbackEdge.events.flush();
    const { stats } = await t.client.vodStats.asset('movie-1');
    assert.deepEqual(stats.sessions, { requests: 3, manifest: 3, ad: 0, new: 3 });
    assert.deepEqual([stats.latency.manifest.min_ms, stats.latency.manifest.max_ms], [20, 40], 'playback request to first variant playlist');
    assert.equal(stats.latency.ad, undefined);
  });

  test('the variant playlist holds the real segments: durations from the manifest, fMP4 init, VOD', async () => {
    const { playlist, maps, segments } = await playLikeAPlayer(t, t.client.playback.url('movie-2'));
    const media = parse(playlist);
    assert.ok(media instanceof types.MediaPlaylist);
    assert.deepEqual([media.version, media.targetDuration, media.mediaSequenceBase, media.playlistType, media.endlist], [7, 4, 0, 'VOD', true]);
    assert.deepEqual(media.segments.map((s) => s.duration), [4, 4, 2]);
    assert.match(maps[0] as string, /^\/play\/s\/[^/]+\/c\/360p\/init\.mp4$/);
    assert.deepEqual(segments.map((s) => s.replace(/^\/play\/s\/[^/]+\//, '')), ['c/360p/seg_00000.m4s', 'c/360p/seg_00001.m4s', 'c/360p/seg_00002.m4s']);
  });

  test('hlsver, targetDur, startseg, slices and dur shape the segment list', async () => {
    await writeFakeAsset(root, t.workspace.id, 'long', { durations: [...Array.from({ length: 9 }, () => 4), 2.5] });
    const shaped = async (params: Array<[string, string]>) => {
      const url = t.client.playback.url('long', { params });
      const multivariant = await t.app.inject({ method: 'GET', url });
      assert.equal(multivariant.statusCode, 200, multivariant.body);
      const variant = await t.app.inject({ method: 'GET', url: variantUris(url, multivariant.body)[0] as string });
      const lines = variant.body.trim().split('\n');
      return { lines, segments: lines.filter((l) => !l.startsWith('#')).map((l) => l.replace('../c/360p/', '')), extinf: lines.filter((l) => l.startsWith('#EXTINF')) };
    };
    const a = await shaped([['hlsver', '6'], ['targetDur', '10'], ['sliceStart', '8'], ['sliceStop', '30'], ['startseg', '2'], ['minDur', '3']]);
    assert.deepEqual(a.lines.slice(0, 5), ['#EXTM3U', '#EXT-X-VERSION:6', '#EXT-X-TARGETDURATION:10', '#EXT-X-MEDIA-SEQUENCE:2', '#EXT-X-PLAYLIST-TYPE:VOD']);
    // 8..30 s: segments 2..7; the last (28-32 s) has 2 s inside, under minDur: dropped; startseg 2 skips two.
    assert.deepEqual(a.segments, ['seg_00004.m4s', 'seg_00005.m4s', 'seg_00006.m4s']);
    const b = await shaped([['dur', '0:15']]);
    assert.deepEqual(b.extinf, ['#EXTINF:4.000,', '#EXTINF:4.000,', '#EXTINF:4.000,', '#EXTINF:4.000,']);
    const c = await shaped([['hlsver', '3'], ['stopOffset', '3']]);
    assert.equal(c.lines[1], '#EXT-X-VERSION:6', 'fMP4 needs version 6');
    assert.equal(c.segments.length, 9);
  });

  test('ad=<name> stitches the configuration\'s ad assets before the content; the first ad segment counts ad with its decision latency', async () => {
    const put = await t.client.playback.putAdConfig('preroll', { ad_server_url: 'https://ads.example.com/vast', ad_asset_ids: ['ad-15s'] });
    assert.deepEqual([put.ready, put.ad_asset_ids], [true, ['ad-15s']]);
    const url = t.client.playback.url('movie-ad', { params: [['ad', 'preroll'], ['ad.genre', 'drama']] });
    const { playlist, segments, maps, fetched } = await playLikeAPlayer(t, url, { pauseMs: 5, segments: 5 });
    const media = parse(playlist);
    assert.ok(media instanceof types.MediaPlaylist);
    assert.equal(media.targetDuration, 4);
    assert.deepEqual(media.segments.map((s) => [s.uri.split('/').slice(1, -1).join('/'), s.duration, s.discontinuity ?? false]), [
      ['a/0/ad-sd', 4, false], ['a/0/ad-sd', 4, false], ['a/0/ad-sd', 4, false], ['a/0/ad-sd', 3, false],
      ['c/360p', 4, true], ['c/360p', 4, false], ['c/360p', 2, false],
    ]);
    assert.match(maps[0] as string, /\/a\/0\/ad-sd\/init\.mp4$/);
    assert.match(fetched.at(-1) as string, /\/c\/360p\/seg_00000\.m4s$/, 'the content follows the four ad segments');
    assert.ok(segments.length === 7);
    await t.runtime.playbackEdge.events.flush();
    const { stats } = await t.client.vodStats.asset('movie-ad');
    assert.deepEqual(stats.sessions, { requests: 1, manifest: 1, ad: 1, new: 1 });
    assert.ok(stats.latency.ad && stats.latency.ad.min_ms > 0 && stats.latency.ad.max_ms < 100, JSON.stringify(stats.latency));
    assert.equal(stats.latency.manifest.min_ms, 5);
  });

  test('an application key signs URLs by name, any active version or the one named by kv', async () => {
    const v1 = await t.client.playback.createAppKey('web-player');
    const v2 = await t.client.playback.addAppKeyVersion('web-player');
    const play = (key: string, params: Array<[string, string]>) =>
      t.app.inject({ method: 'GET', url: t.client.playback.url('movie-3', { key, params }) });
    assert.equal((await play(v1.secret as string, [['kid', 'web-player']])).statusCode, 200);
    assert.equal((await play(v2.secret as string, [['kid', 'web-player'], ['kv', '2']])).statusCode, 200);
    assert.equal((await play(v1.secret as string, [['kid', 'web-player'], ['kv', '2']])).headers['x-playback-error-code'], '110');
    await t.client.playback.revokeAppKeyVersion('web-player', 1);
    assert.equal((await play(v1.secret as string, [['kid', 'web-player'], ['kv', '1']])).headers['x-playback-error-code'], '120');
    assert.equal((await play(v1.secret as string, [['kid', 'web-player']])).headers['x-playback-error-code'], '110');
  });

  test('a shared private asset plays from its owner\'s library for the workspace it is shared with', async () => {
    await writeFakeAsset(root, t.other.workspace.id, 'premiere');
    await t.other.client.playback.putPrivateAsset('premiere', [t.workspace.id]);
    const url = t.client.playback.url('premiere', { params: [['coid', t.other.workspace.id]] });
    const { fetched } = await playLikeAPlayer(t, url);
    assert.equal(fetched.length, 2);
    const ownLibrary = await t.app.inject({ method: 'GET', url: t.client.playback.url('premiere') });
    assert.equal(ownLibrary.headers['x-playback-error-code'], '999', 'not in the playing workspace\'s own library');
  });
});
