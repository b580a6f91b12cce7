import { mediaRootOf } from '../../platform/media/media-root.js';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { clusterPair, clusterPairProblem, type ClusterPair } from '../../../test/helpers/cluster-pair.js';
import { createTestApp, type TestApp } from '../../../test/helpers/test-app.js';
import type { FakeClock } from '../../platform/clock.js';
import { assetDir } from '../../platform/media/media-layout.js';
import { startLocalReceiver, type LocalReceiver } from '../../platform/outbound/testing/local-receiver.js';
import { IngestEventSink } from './playback-events.js';
import { mediaUris, testEdge, variantUris, type TestEdge } from './testing/edge-test-kit.js';
import { fakeSegmentBytes, writeFakeAsset } from './testing/media-fixtures.js';

const SEGMENT_BYTES = 4096;

describe('playback sessions: serving', () => {
  let t: TestApp;
  let edge: TestEdge;
  let receiver: LocalReceiver;
  let root: string;
  before(async () => {
    edge = testEdge();
    t = await createTestApp({ overrides: { playbackEdge: edge.overrides }, env: { PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32' } });
    receiver = await startLocalReceiver();
    root = mediaRootOf(t.runtime.config);
    for (const id of ['clip-1', 'clip-2', 'clip-3', 'clip-4']) await writeFakeAsset(root, t.workspace.id, id, { segmentBytes: SEGMENT_BYTES });
  });
  after(async () => {
    await t.close();
    await receiver.close();
  });

  /** A new session of `asset`: its variant path and media URIs. */
  const session = async (asset: string, o: { ttlS?: number; params?: Array<[string, string]> } = {}) => {
    const url = t.client.playback.url(asset, { ttlS: o.ttlS ?? 3600, ...(o.params ? { params: o.params } : {}) });
    const multivariant = await t.app.inject({ method: 'GET', url });
    assert.equal(multivariant.statusCode, 200, multivariant.body);
    const variant = variantUris(url, multivariant.body)[0] as string;
    const playlist = await t.app.inject({ method: 'GET', url: variant });
    return { url, variant, playlist, ...mediaUris(variant, playlist.body) };
  };

  test('content types and caching: playlists are HLS (multivariant never cached, variants briefly), init and segments video/mp4 cached for a year', async () => {
    const s = await session('clip-1');
    assert.match(String(s.playlist.headers['content-type']), /^application\/vnd\.apple\.mpegurl/);
    assert.equal(s.playlist.headers['cache-control'], 'public, max-age=10');
    for (const path of [s.maps[0] as string, s.segments[1] as string]) {
      const file = await t.app.inject({ method: 'GET', url: path });
      assert.equal(file.statusCode, 200);
      assert.equal(file.headers['content-type'], 'video/mp4');
      assert.equal(file.headers['cache-control'], 'public, max-age=31536000, immutable');
      assert.equal(file.headers['accept-ranges'], 'bytes');
    }
    const segment = await t.app.inject({ method: 'GET', url: s.segments[1] as string });
    assert.deepEqual(segment.rawPayload, fakeSegmentBytes('clip-1', '360p', 1, SEGMENT_BYTES));
    assert.equal(segment.headers['content-length'], String(SEGMENT_BYTES));
  });

  test('byte ranges: 206 with Content-Range, an open range, and 416 problem+json when unsatisfiable', async () => {
    const s = await session('clip-2');
    const path = s.segments[0] as string;
    const whole = fakeSegmentBytes('clip-2', '360p', 0, SEGMENT_BYTES);
    const part = await t.app.inject({ method: 'GET', url: path, headers: { range: 'bytes=100-199' } });
    assert.equal(part.statusCode, 206);
    assert.equal(part.headers['content-range'], `bytes 100-199/${SEGMENT_BYTES}`);
    assert.deepEqual(part.rawPayload, whole.subarray(100, 200));
    const tail = await t.app.inject({ method: 'GET', url: path, headers: { range: 'bytes=4000-' } });
    assert.equal(tail.statusCode, 206);
    assert.deepEqual(tail.rawPayload, whole.subarray(4000));
    const beyond = await t.app.inject({ method: 'GET', url: path, headers: { range: `bytes=${SEGMENT_BYTES}-` } });
    assert.equal(beyond.statusCode, 416);
    assert.equal(beyond.headers['content-range'], `bytes */${SEGMENT_BYTES}`);
    assert.equal(beyond.headers['content-type'], 'application/problem+json; charset=utf-8');
    assert.equal(beyond.json().code, 'range_not_satisfiable');
  });

  test('HEAD answers the headers without a body and is no playback: no start', async () => {
    const s = await session('clip-3');
    const before = edge.events.length;
    const head = await t.app.inject({ method: 'HEAD', url: s.segments[0] as string });
    assert.equal(head.statusCode, 200);
    assert.equal(head.headers['content-length'], String(SEGMENT_BYTES));
    assert.equal(head.headers['content-type'], 'video/mp4');
    assert.equal(head.body, '');
    assert.equal(edge.events.length, before);
    assert.equal((await t.app.inject({ method: 'HEAD', url: s.variant })).statusCode, 200);
  });

  test('CORS: any origin may play and read the range and error headers; the preflight allows Range and the CMCD headers', async () => {
    const s = await session('clip-1');
    const origin = { origin: 'https://player.example.net' };
    for (const path of [s.url, s.variant, s.segments[0] as string, '/play/s/forged/v/360p.m3u8']) {
      const response = await t.app.inject({ method: 'GET', url: path, headers: origin });
      assert.equal(response.headers['access-control-allow-origin'], '*', path);
      assert.match(String(response.headers['access-control-expose-headers']), /Content-Range.*X-Playback-Error-Code/);
    }
    const preflight = await t.app.inject({
      method: 'OPTIONS',
      url: s.segments[0] as string,
      headers: { ...origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'range,cmcd-request,cmcd-session' },
    });
    assert.equal(preflight.statusCode, 204);
    assert.equal(preflight.headers['access-control-allow-origin'], '*');
    assert.match(String(preflight.headers['access-control-allow-methods']), /GET, HEAD/);
    assert.equal(preflight.headers['access-control-allow-headers'], 'Range, CMCD-Request, CMCD-Object, CMCD-Session, CMCD-Status');
    const api = await t.app.inject({ method: 'OPTIONS', url: '/api/v4/workspace', headers: origin });
    assert.equal(api.headers['access-control-allow-origin'], undefined, 'the API stays same-origin');
  });

  test('a CMCD parameter appended after sig (as players do) never breaks the signature; its sid names the session', async () => {
    const sid = 'b3e9f4f2-8d0e-4e5e-9d59-0c8a3f0f6c11';
    const cmcd = `CMCD=${encodeURIComponent(`cid="clip-4",ot=m,sf=h,sid="${sid}",su`)}`;
    const url = `${t.client.playback.url('clip-4')}&${cmcd}`;
    const response = await t.app.inject({ method: 'GET', url });
    assert.equal(response.statusCode, 200, response.body);
    const variant = variantUris(url, response.body)[0] as string;
    assert.equal((await t.app.inject({ method: 'GET', url: `${variant}?${cmcd}` })).statusCode, 200);
    const request = edge.events.findLast((e) => e.type === 'request');
    assert.equal(request?.session_id, sid);
    const headers = await t.app.inject({ method: 'GET', url: t.client.playback.url('clip-4'), headers: { 'cmcd-session': `sid="${sid}-2"` } });
    assert.equal(headers.statusCode, 200);
    assert.equal(edge.events.findLast((e) => e.type === 'request')?.session_id, `${sid}-2`);
  });

  test('a session expiring mid-playback: its next request is 410 / 104, counted in the owner summary\'s errors and reported to the callback', async () => {
    await t.client.errorReporting.putSettings({ callback_url: receiver.url, enabled: true });
    const tested = receiver.count();
    const s = await session('clip-1', { ttlS: 30, params: [['pbs', 'expiring-session-1']] });
    assert.equal((await t.app.inject({ method: 'GET', url: s.segments[0] as string })).statusCode, 200);
    (t.clock as FakeClock).advance(31_000);
    const late = await t.app.inject({ method: 'GET', url: s.segments[1] as string, headers: { 'user-agent': 'Player/9' } });
    assert.equal(late.statusCode, 410);
    assert.equal(late.headers['x-playback-error-code'], '104');
    assert.equal(late.json().playback_error_code, 104);
    await t.runtime.playbackEdge.events.flush();
    await receiver.waitFor(tested + 1);
    const report = JSON.parse(receiver.received.at(-1)?.body ?? '{}') as Record<string, unknown>;
    assert.deepEqual([report.owner, report.code, report.ua, report.url], [t.workspace.id, 410, 'Player/9', `http://localhost:80${s.segments[1]}`]);
    assert.match(String(report.msg), /^the playback session expired at /);
    // The asset's own window ends at its latest session start, before this error: the owner summary (the last 180 s) counts it.
    const { stats } = await t.client.vodStats.summary();
    assert.equal(stats.errors['104'], 1);
  });

  test('a forged token is 403 / 110; a file deleted under a live session is 404 / 999; nothing else of the directory is reachable', async () => {
    const s = await session('clip-3');
    const forged = (s.segments[0] as string).replace(/\/s\/([^.]+)\./, (_m, payload: string) => `/s/${payload.slice(0, -4)}AAAA.`);
    const refused = await t.app.inject({ method: 'GET', url: forged });
    assert.deepEqual([refused.statusCode, refused.headers['x-playback-error-code']], [403, '110']);
    const base = s.variant.replace(/v\/360p\.m3u8$/, '');
    for (const path of ['c/manifest.json', 'c/poster.jpg', 'c/360p/playlist.m3u8', 'c/360p/%2e%2e/%2e%2e/manifest.json', 'c/360p/..%2F..%2Fmanifest.json']) {
      const response = await t.app.inject({ method: 'GET', url: `${base}${path}` });
      assert.equal(response.statusCode, 404, path);
      assert.equal(response.headers['x-playback-error-code'], '999', path);
    }
    // Dot segments are resolved before routing: what is left is no session path.
    const escaped = await t.app.inject({ method: 'GET', url: `${base}c/../../../secret.key` });
    assert.ok(escaped.statusCode >= 400 && escaped.headers['x-playback-error-code'] !== undefined, escaped.body);
    await rm(`${assetDir(root, t.workspace.id, 'clip-3')}/360p/seg_00002.m4s`);
    const gone = await t.app.inject({ method: 'GET', url: s.segments[2] as string });
    assert.deepEqual([gone.statusCode, gone.headers['x-playback-error-code']], [404, '999']);
    assert.match(gone.json().detail, /no longer in the library/);
  });

  test('an asset the library does not hold is refused 404 / 999 with an error event (counted like any refusal until the statistics take workspace_only)', async () => {
    const response = await t.app.inject({ method: 'GET', url: t.client.playback.url('never-uploaded') });
    assert.deepEqual([response.statusCode, response.headers['x-playback-error-code']], [404, '999']);
    assert.match(response.json().detail, /not in the library/);
    const error = edge.events.findLast((e) => e.type === 'error');
    assert.equal(error?.asset_id, 'never-uploaded');
  });

  test('the session requests are counted in playline_playback_edge_session_requests_total', async () => {
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
    assert.match(metrics.body, /^playline_playback_edge_session_requests_total\{kind="content",result="ok"\} [1-9]\d*$/m);
    assert.match(metrics.body, /^playline_playback_edge_session_requests_total\{kind="content",result="104"\} 1$/m);
    assert.match(metrics.body, /^playline_playback_edge_session_requests_total\{kind="variant",result="ok"\} [1-9]\d*$/m);
  });
});

describe('playback sessions: refusals of assets outside the library count for the workspace only', () => {
  test('a refused playback of an asset outside the library counts in the owner summary, never as an asset', async () => {
    const t = await createTestApp();
    try {
      const response = await t.app.inject({ method: 'GET', url: t.client.playback.url('never-uploaded') });
      assert.equal(response.statusCode, 404);
      await t.runtime.playbackEdge.events.flush();
      const summary = await t.client.vodStats.summary();
      assert.equal(summary.stats.errors['999'], 1);
      assert.equal(summary.stats.sessions.requests, 1);
      const asset = await t.client.core.send('GET', '/api/v4/monitoring/vod-stats/never-uploaded');
      assert.equal(asset.status, 404, 'no statistics for an asset the workspace does not have');
    } finally {
      await t.close();
    }
  });
});

describe('playback sessions: startup_ms and rebuffer from CMCD reach the statistics history', () => {
  test('start with startup_ms and rebuffer events from CMCD are accepted by the statistics ingest, none refused', async () => {
    const t = await createTestApp();
    try {
      await writeFakeAsset(mediaRootOf(t.runtime.config), t.workspace.id, 'clip-h');
      const url = t.client.playback.url('clip-h');
      const multivariant = await t.app.inject({ method: 'GET', url });
      const variant = variantUris(url, multivariant.body)[0] as string;
      const { segments } = mediaUris(variant, (await t.app.inject({ method: 'GET', url: variant })).body);
      (t.clock as FakeClock).advance(300);
      assert.equal((await t.app.inject({ method: 'GET', url: segments[0] as string })).statusCode, 200);
      assert.equal((await t.app.inject({ method: 'GET', url: `${segments[1]}?CMCD=${encodeURIComponent('bs,ot=v')}` })).statusCode, 200);
      const sink = t.runtime.playbackEdge.events;
      await sink.flush();
      assert.ok(sink instanceof IngestEventSink);
      assert.deepEqual(sink.counters, { sent: 4, dropped: 0, rejected: 0, failed: 0 }, 'request, manifest, start (startup_ms 300), rebuffer');
      const points = (await t.runtime.vodStats.store.history(t.workspace.id, 'clip-h', 0, t.clock.now())) ?? [];
      assert.deepEqual(points.map((p) => [p.stats.new, p.rebuffers, p.startup]), [[1, 1, { count: 1, sum: 300, max: 300 }]]);
    } finally {
      await t.close();
    }
  });
});

const clusterProblem = await clusterPairProblem();

describe('playback sessions in cluster mode: any instance serves a session another one started', { skip: clusterProblem }, () => {
  let pair: ClusterPair;
  before(async () => {
    pair = await clusterPair();
    await writeFakeAsset(mediaRootOf(pair.a.runtime.config), pair.a.workspace.id, 'shared-clip');
  });
  after(() => pair?.close());

  test('a session started on one instance plays on the other (same secret key, shared media directory); statistics count it once', async () => {
    const { a, b } = pair;
    const url = a.client.playback.url('shared-clip');
    const multivariant = await a.app.inject({ method: 'GET', url });
    assert.equal(multivariant.statusCode, 200, multivariant.body);
    const variant = variantUris(url, multivariant.body)[0] as string;
    const onB = await b.app.inject({ method: 'GET', url: variant });
    assert.equal(onB.statusCode, 200, onB.body);
    const onA = await a.app.inject({ method: 'GET', url: variant });
    assert.equal(onA.statusCode, 200, 'the same variant on the first instance: its first manifest there too');
    const { segments } = mediaUris(variant, onB.body);
    assert.equal((await b.app.inject({ method: 'GET', url: segments[0] as string })).statusCode, 200);
    assert.equal((await a.app.inject({ method: 'GET', url: segments[1] as string })).statusCode, 200);
    await a.runtime.playbackEdge.events.flush();
    await b.runtime.playbackEdge.events.flush();
    const { stats } = await a.client.vodStats.asset('shared-clip');
    assert.deepEqual(stats.sessions, { requests: 1, manifest: 1, ad: 0, new: 1 });
  });
});
