import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../../../test/helpers/test-app.js';
import { startLocalReceiver, type LocalReceiver } from '../error-reporting/testing/local-receiver.js';
import { assetDurationS } from './hls-playlist.js';
import { testEdge, type TestEdge } from './testing/edge-test-kit.js';

const playlistLines = (body: string) => body.trim().split('\n');

describe('playback edge: valid playbacks', () => {
  let t: TestApp;
  let edge: TestEdge;
  before(async () => {
    edge = testEdge({ stepMs: 0.75 });
    t = await createTestApp({ overrides: { playbackEdge: edge.overrides } });
  });
  after(() => t.close());

  test('a signed URL gets a VOD media playlist and counts in requests, manifest and new with plausible latency', async () => {
    for (let i = 0; i < 3; i++) {
      edge.stopwatch.stepMs = 0.5 + i;
      const response = await t.app.inject({ method: 'GET', url: t.client.playback.url('movie-1') });
      assert.equal(response.statusCode, 200, response.body);
      assert.match(String(response.headers['content-type']), /^application\/vnd\.apple\.mpegurl/);
      const lines = playlistLines(response.body);
      assert.equal(lines[0], '#EXTM3U');
      assert.ok(lines.includes('#EXT-X-VERSION:3'));
      assert.ok(lines.includes('#EXT-X-TARGETDURATION:6'));
      assert.equal(lines.at(-1), '#EXT-X-ENDLIST');
      const total = lines.filter((l) => l.startsWith('#EXTINF:')).reduce((sum, l) => sum + Number(l.slice(8, -1)), 0);
      assert.equal(Math.round(total), assetDurationS('movie-1'));
    }
    assert.deepEqual(edge.events.slice(0, 3).map((e) => e.type), ['request', 'manifest', 'start']);
    await t.runtime.playbackEdge.events.flush();
    const { stats } = await t.client.vodStats.asset('movie-1');
    assert.deepEqual(stats.sessions, { requests: 3, manifest: 3, ad: 0, new: 3 });
    const m = stats.latency.manifest;
    assert.ok(m.min_ms >= 0 && m.min_ms <= m.mean_ms && m.mean_ms <= m.max_ms, JSON.stringify(m));
    assert.ok(m.max_ms > m.min_ms, 'three playbacks measured three different latencies');
    assert.equal(stats.latency.ad, undefined);
  });

  test('ad parameters: the ad decision is asked, the preroll is in the playlist, and ad counts with its latency', async () => {
    await t.client.playback.putAdConfig('preroll', { ad_server_url: 'https://ads.example.com/vast', slots_s: [15, 10] });
    const response = await t.app.inject({ method: 'GET', url: t.client.playback.url('movie-ad', { params: [['ad', 'preroll'], ['ad.genre', 'drama']] }) });
    assert.equal(response.statusCode, 200, response.body);
    const lines = playlistLines(response.body);
    assert.ok(lines.includes('#EXT-X-TARGETDURATION:15'), 'the target duration covers the longest ad');
    assert.deepEqual(lines.slice(5, 10), ['#EXTINF:15.000,', '/ads/preroll-1.ts', '#EXTINF:10.000,', '/ads/preroll-2.ts', '#EXT-X-DISCONTINUITY']);
    await t.runtime.playbackEdge.events.flush();
    const { stats } = await t.client.vodStats.asset('movie-ad');
    assert.deepEqual(stats.sessions, { requests: 1, manifest: 1, ad: 1, new: 1 });
    assert.ok(stats.latency.ad && stats.latency.ad.min_ms >= 0 && stats.latency.ad.min_ms <= stats.latency.manifest.min_ms);
  });

  test('hlsver, targetDur, startseg, slices and dur shape the playlist', async () => {
    const url = t.client.playback.url('movie-2', {
      params: [['hlsver', '6'], ['targetDur', '4'], ['sliceStart', '8'], ['sliceStop', '30'], ['startseg', '2'], ['minDur', '3']],
    });
    const lines = playlistLines((await t.app.inject({ method: 'GET', url })).body);
    assert.deepEqual(lines.slice(0, 5), ['#EXTM3U', '#EXT-X-VERSION:6', '#EXT-X-TARGETDURATION:4', '#EXT-X-MEDIA-SEQUENCE:2', '#EXT-X-PLAYLIST-TYPE:VOD']);
    // 8..30 s in 4 s segments: 4,4,4,4,4,2 -> the 2 s tail is under minDur; from segment 2: three of 4 s.
    assert.deepEqual(lines.filter((l) => l.startsWith('#EXTINF')), ['#EXTINF:4.000,', '#EXTINF:4.000,', '#EXTINF:4.000,']);
    assert.equal(lines[6], '/segments/movie-2/2.ts');
    const capped = playlistLines((await t.app.inject({ method: 'GET', url: t.client.playback.url('movie-2', { params: [['dur', '0:15']] }) })).body);
    assert.deepEqual(capped.filter((l) => l.startsWith('#EXTINF')), ['#EXTINF:6.000,', '#EXTINF:6.000,', '#EXTINF:3.000,']);
  });

  test('a live event gets a sliding window without an end', async () => {
    const nowS = Math.floor(t.clock.now() / 1000);
    const url = t.client.playback.url('launch', { kind: 'event', params: [['ts', String(nowS - 600)], ['delay', '30']] });
    const response = await t.app.inject({ method: 'GET', url });
    assert.equal(response.statusCode, 200, response.body);
    const lines = playlistLines(response.body);
    assert.ok(!lines.includes('#EXT-X-ENDLIST'));
    assert.ok(lines.some((l) => l.startsWith('#EXT-X-PROGRAM-DATE-TIME:')));
    assert.equal(lines.filter((l) => l.startsWith('#EXTINF')).length, 5);
    // (600 - 30) / 6 = 95 segments done; the newest complete one is 94, the window starts at 90.
    assert.ok(lines.includes('#EXT-X-MEDIA-SEQUENCE:90'));
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

  test('a shared private asset plays for the workspace it is shared with', async () => {
    await t.other.client.playback.putPrivateAsset('premiere', [t.workspace.id]);
    const url = t.client.playback.url('premiere', { params: [['coid', t.other.workspace.id]] });
    assert.equal((await t.app.inject({ method: 'GET', url })).statusCode, 200);
  });
});

describe('playback edge: error reports', () => {
  let t: TestApp;
  let receiver: LocalReceiver;
  before(async () => {
    t = await createTestApp({ env: { PLAYLINE_CALLBACK_ALLOWLIST: '127.0.0.1/32' } });
    receiver = await startLocalReceiver();
  });
  after(async () => {
    await t.close();
    await receiver.close();
  });

  test('a bad signature delivers one report whose owner, url, ip, ua, code, msg and timestamp match the request', async () => {
    await t.client.errorReporting.putSettings({ callback_url: receiver.url, enabled: true });
    const tested = receiver.count();
    const url = t.client.playback.url('movie-x').replace(/sig=[0-9a-f]+$/, `sig=${'0'.repeat(64)}`);
    const response = await t.app.inject({ method: 'GET', url, headers: { 'user-agent': 'Player/9 (TV)' }, remoteAddress: '198.51.100.23' });
    assert.equal(response.statusCode, 403);
    await t.runtime.playbackEdge.events.flush();
    await receiver.waitFor(tested + 1);
    assert.equal(receiver.count(), tested + 1, 'exactly one report');
    const report = JSON.parse(receiver.received.at(-1)?.body ?? '{}') as Record<string, unknown>;
    assert.deepEqual(report, {
      owner: t.workspace.id,
      subtype: 'web',
      url: `http://localhost:80${url}`,
      ip: '198.51.100.23',
      code: 403,
      ua: 'Player/9 (TV)',
      msg: 'the signature does not match',
      timestamp: Math.floor(t.clock.now() / 1000),
    });
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
    assert.match(metrics.body, /^playline_playback_edge_playbacks_total\{result="110"\} 1$/m);
  });
});
