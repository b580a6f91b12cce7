import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { frontServerBlock, nginxSkip, startNginx, type RunningNginx } from '../helpers/nginx.js';
import type { FakeClock } from '../../src/platform/clock.js';
import { assetDir } from '../../src/platform/media/media-layout.js';
import { mediaRootOf } from '../../src/platform/media/media-root.js';
import { mediaUris, testEdge, variantUris, type TestEdge } from '../../src/modules/playback-edge/testing/edge-test-kit.js';
import { fakeSegmentBytes, writeFakeAsset } from '../../src/modules/playback-edge/testing/media-fixtures.js';

/**
 * The documented nginx front (deploy/nginx/playline.conf, as shipped) started by the test in front
 * of a server with PLAYLINE_MEDIA_ACCEL_PREFIX, against the same server without it (direct): the
 * same session played through both answers the same statuses, headers, bytes and refusals, and
 * the statistics show the same. Skips without nginx unless PLAYLINE_REQUIRE_SERVICES=1 (fails).
 */
const skip = nginxSkip();
const SEGMENT_BYTES = 300_000;
const ASSET = 'front-clip';
/** The client's own address, another than the front's (127.0.0.1): X-Forwarded-For has to carry it. */
const CLIENT = '127.0.0.3';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A GET (or HEAD) from CLIENT's address, so the server can only learn it from the front. */
const get = (base: string, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method, headers, localAddress: CLIENT }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });

/** What a player reads of an answer: the same through the front as direct. */
const PLAYER_HEADERS = ['content-type', 'content-length', 'content-range', 'accept-ranges', 'cache-control', 'access-control-allow-origin', 'access-control-expose-headers', 'timing-allow-origin', 'x-playback-error-code', 'retry-after'];
const seen = (a: Answer) => ({ status: a.status, ...Object.fromEntries(PLAYER_HEADERS.map((h) => [h, a.headers[h]])) });
const problem = (a: Answer) => {
  const body = JSON.parse(a.body.toString()) as { code: string; status: number; playback_error_code?: number };
  return { code: body.code, status: body.status, playback_error_code: body.playback_error_code };
};

describe('the nginx front: nginx sends session files after Playline authorizes and counts each request', { skip, timeout: 60_000 }, () => {
  let direct: TestApp;
  let fronted: TestApp;
  let directEdge: TestEdge;
  let frontedEdge: TestEdge;
  let nginx: RunningNginx;
  let directUrl = '';

  before(async () => {
    directEdge = testEdge();
    frontedEdge = testEdge();
    direct = await createTestApp({ overrides: { playbackEdge: directEdge.overrides } });
    fronted = await createTestApp({
      overrides: { playbackEdge: frontedEdge.overrides },
      env: { PLAYLINE_MEDIA_ACCEL_PREFIX: '/_playline_media/', PLAYLINE_TRUSTED_PROXIES: '127.0.0.1' },
    });
    directUrl = await direct.app.listen({ port: 0, host: '127.0.0.1' });
    await fronted.app.listen({ port: 0, host: '127.0.0.1' });
    for (const t of [direct, fronted]) await writeFakeAsset(mediaRootOf(t.runtime.config), t.workspace.id, ASSET, { segmentBytes: SEGMENT_BYTES });
    const upstreamPort = (fronted.app.server.address() as AddressInfo).port;
    nginx = await startNginx(frontServerBlock({ upstreamPort, mediaRoot: mediaRootOf(fronted.runtime.config) }));
  });

  after(async () => {
    await nginx?.stop();
    await direct?.close();
    await fronted?.close();
  });

  /** A new session of the asset on `t` through `base`: the multivariant answer and its first variant's files. */
  const session = async (t: TestApp, base: string, params: Array<[string, string]> = [], ttlS = 3600) => {
    const url = t.client.playback.url(ASSET, { ttlS, params });
    const multivariant = await get(base, url);
    assert.equal(multivariant.status, 200, multivariant.body.toString());
    const variant = variantUris(url, multivariant.body.toString())[0] as string;
    const playlist = await get(base, variant);
    assert.equal(playlist.status, 200, playlist.body.toString());
    return { url, multivariant, variant, playlist, ...mediaUris(variant, playlist.body.toString()) };
  };

  test('a session through the front: playlists, init and segments (whole, ranges, HEAD) answer as direct, the bytes come from nginx, and the statistics show the same session', async () => {
    const a = await session(direct, directUrl);
    const b = await session(fronted, nginx.url);
    assert.deepEqual(seen(b.multivariant), seen(a.multivariant));
    assert.deepEqual(seen(b.playlist), seen(a.playlist));
    assert.equal(b.segments.length, a.segments.length);
    const files = (s: typeof a) => [s.maps[0] as string, ...s.segments];
    for (const [i, [pathA, pathB]] of files(a).map((p, j) => [p, files(b)[j] as string] as const).entries()) {
      for (const headers of [{} as Record<string, string>, { range: 'bytes=1000-1999' }, { range: 'bytes=299000-' }, { range: 'bytes=-10' }]) {
        const [x, y] = [await get(directUrl, pathA, headers), await get(nginx.url, pathB, headers)];
        assert.deepEqual(seen(y), seen(x), `${pathB} ${JSON.stringify(headers)}`);
        if (x.status === 416) {
          assert.deepEqual(problem(y), problem(x));
          continue;
        }
        assert.ok(y.body.equals(x.body), `same bytes: ${pathB} ${JSON.stringify(headers)}`);
        // nginx sent them (its strong ETag, not @fastify/send's weak one), and never shows the redirect.
        assert.match(String(y.headers.etag), /^"[0-9a-f]+-[0-9a-f]+"$/);
        assert.equal(y.headers['x-accel-redirect'], undefined);
        assert.match(String(y.headers['x-request-id']), /^[0-9a-f-]{36}$/);
      }
      if (i === 1) assert.ok((await get(nginx.url, pathB)).body.equals(fakeSegmentBytes(ASSET, '360p', 0, SEGMENT_BYTES)));
      const [hx, hy] = [await get(directUrl, pathA, {}, 'HEAD'), await get(nginx.url, pathB, {}, 'HEAD')];
      assert.deepEqual(seen(hy), seen(hx), `HEAD ${pathB}`);
      assert.equal(hy.body.length, 0);
    }
    // Statistics: request, manifest, start once each, in the same order, from each server alone.
    const types = (e: TestEdge) => e.events.map((event) => event.type);
    assert.deepEqual(types(frontedEdge), types(directEdge));
    assert.deepEqual(types(frontedEdge), ['request', 'manifest', 'start']);
    for (const t of [direct, fronted]) await t.runtime.playbackEdge.events.flush();
    const [sa, sb] = [await direct.client.vodStats.asset(ASSET), await fronted.client.vodStats.asset(ASSET)];
    assert.deepEqual(sb.stats.sessions, sa.stats.sessions);
    assert.deepEqual(sb.stats.sessions, { requests: 1, manifest: 1, ad: 0, new: 1 });
  });

  test('refusals through the front are the server\'s own: forged and expired tokens, a path the session lacks, an unsatisfiable Range, a file gone from the library; each counted as direct', async () => {
    const a = await session(direct, directUrl, [], 60);
    const b = await session(fronted, nginx.url, [], 60);
    const before = [directEdge.events.length, frontedEdge.events.length] as const;
    const forge = (path: string) => path.replace(/\/s\/([^/]+)\//, (_m, token: string) => `/s/${token.slice(0, -4)}AAAA/`);
    const cases: Array<[string, (p: typeof a) => string, Record<string, string>]> = [
      ['forged token', (s) => forge(s.segments[0] as string), {}],
      ['not in the session', (s) => (s.segments[0] as string).replace(/[^/]+$/, 'nope.m4s'), {}],
      ['range beyond the file', (s) => s.segments[1] as string, { range: `bytes=${SEGMENT_BYTES}-` }],
    ];
    for (const [name, path, headers] of cases) {
      const [x, y] = [await get(directUrl, path(a), headers), await get(nginx.url, path(b), headers)];
      assert.deepEqual(seen(y), seen(x), name);
      assert.deepEqual(problem(y), problem(x), name);
    }
    // A file that left the library after the session started (its first segment counted, so the front is
    // left to send the next): nginx finds none and hands the request back; Playline refuses as direct.
    for (const [base, s] of [[directUrl, a], [nginx.url, b]] as const) assert.equal((await get(base, s.segments[0] as string)).status, 200);
    for (const t of [direct, fronted]) await rm(`${assetDir(mediaRootOf(t.runtime.config), t.workspace.id, ASSET)}/${(a.segments[2] as string).split('/c/')[1]}`);
    const [gx, gy] = [await get(directUrl, a.segments[2] as string), await get(nginx.url, b.segments[2] as string)];
    assert.deepEqual(seen(gy), seen(gx), 'gone');
    assert.deepEqual(problem(gy), problem(gx));
    assert.equal(problem(gy).playback_error_code, 999);
    // Expired: both clocks past the session's end.
    for (const t of [direct, fronted]) (t.clock as FakeClock).advance(61_000);
    const [ex, ey] = [await get(directUrl, a.segments[1] as string), await get(nginx.url, b.segments[1] as string)];
    assert.deepEqual(seen(ey), seen(ex), 'expired');
    assert.deepEqual(problem(ey), problem(ex));
    assert.equal(problem(ey).playback_error_code, 104);
    const errors = (e: TestEdge, from: number) => e.events.slice(from).map((event) => [event.type, 'error_code' in event ? event.error_code : undefined]);
    assert.deepEqual(errors(frontedEdge, before[1]), errors(directEdge, before[0]));
  });

  test('abuse: the internal location answers no client, a client cannot ask for in-process sending through the front, and X-Forwarded-For from a client is not believed', async () => {
    const owner = fronted.workspace.id;
    const file = (await session(fronted, nginx.url)).segments[0] as string;
    const below = `assets/${owner}/${ASSET}/${file.split('/c/')[1] as string}`;
    for (const path of [`/_playline_media/${below}`, `/_playline_media/../_playline_media/${below}`, `/%5Fplayline_media/${below}`, `/_playline_media//${below}`]) {
      const answer = await get(nginx.url, path);
      assert.notEqual(answer.status, 200, path);
      assert.ok(!answer.body.includes(fakeSegmentBytes(ASSET, '360p', 0, SEGMENT_BYTES).subarray(0, 64)), `no media bytes for ${path}`);
    }
    // The hand-back header is the front's alone: a client's is cleared, and nginx still sends the file.
    const inline = await get(nginx.url, file, { 'x-playline-media-inline': '1' });
    assert.equal(inline.status, 200);
    assert.match(String(inline.headers.etag), /^"[0-9a-f]+-[0-9a-f]+"$/, 'sent by nginx');
    // The client's address is the one nginx saw (127.0.0.3), whatever X-Forwarded-For it sends.
    const bound = fronted.client.playback.url(ASSET, { params: [['ip', CLIENT]] });
    assert.equal((await get(nginx.url, bound)).status, 200, 'a URL bound to the client\'s own address plays through the front');
    const spoofed = fronted.client.playback.url(ASSET, { params: [['ip', '203.0.113.9']] });
    const refused = await get(nginx.url, spoofed, { 'x-forwarded-for': '203.0.113.9' });
    assert.equal(refused.status, 403);
    assert.equal(problem(refused).playback_error_code, 111);
  });
});
