import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createTestApp, type TestApp } from '../../../test/helpers/test-app.js';
import type { FakeClock } from '../../platform/clock.js';
import { assetDir } from '../../platform/media/media-layout.js';
import { mediaRootOf } from '../../platform/media/media-root.js';
import { PROGRESSIVE_FILE } from '../../platform/media/packaged-manifest.js';
import { mediaUris, testEdge, variantUris, type TestEdge } from './testing/edge-test-kit.js';
import { writeFakeAsset } from './testing/media-fixtures.js';

/** The edge's tags of a media playlist, without the segment lines. */
const tagsOf = (playlist: string) => playlist.split('\n').filter((l) => l.startsWith('#EXT-X-'));

describe('playback sessions: an asset played while it is packaged (progressive)', () => {
  let t: TestApp;
  let edge: TestEdge;
  let root: string;
  before(async () => {
    edge = testEdge();
    t = await createTestApp({ overrides: { playbackEdge: edge.overrides } });
    root = mediaRootOf(t.runtime.config);
  });
  after(() => t.close());

  /** Lets the edge see the library's files again (it trusts a manifest for a second). */
  const revalidate = () => (t.clock as FakeClock).advance(1_000);

  const open = async (asset: string, params: Array<[string, string]> = []) => {
    const url = t.client.playback.url(asset, { ttlS: 3600, params });
    const multivariant = await t.app.inject({ method: 'GET', url });
    assert.equal(multivariant.statusCode, 200, multivariant.body);
    const variants = variantUris(url, multivariant.body);
    assert.equal(variants.length, 2, 'every rendition offered from the first segments on');
    return variants[0] as string;
  };
  const playlist = async (variant: string) => {
    const answer = await t.app.inject({ method: 'GET', url: variant });
    assert.equal(answer.statusCode, 200, answer.body);
    return { answer, ...mediaUris(variant, answer.body) };
  };

  test('an EVENT playlist that grows as segments are packaged, never cached, played from its start; then the VOD playlist with the same segment URLs in the same session', async () => {
    await writeFakeAsset(root, t.workspace.id, 'growing', { durations: [4], progressiveExpectedS: 10 });
    const variant = await open('growing');
    const first = await playlist(variant);
    const tags = tagsOf(first.answer.body);
    assert.ok(tags.includes('#EXT-X-PLAYLIST-TYPE:EVENT'), first.answer.body);
    assert.ok(tags.includes('#EXT-X-START:TIME-OFFSET=0'), 'players start at its beginning, not at a live edge');
    assert.ok(tags.includes('#EXT-X-TARGETDURATION:4'));
    assert.ok(!tags.includes('#EXT-X-ENDLIST'), 'no end while packaged');
    assert.equal(first.answer.headers['cache-control'], 'no-store');
    assert.equal(first.segments.length, 1);
    const segment = await t.app.inject({ method: 'GET', url: first.segments[0] as string });
    assert.equal(segment.statusCode, 200);
    assert.equal(segment.headers['cache-control'], 'public, max-age=31536000, immutable', 'a packaged segment never changes');
    // The next segment is not packaged yet: not listed, and not served.
    const ahead = (first.segments[0] as string).replace('seg_00000', 'seg_00001');
    assert.equal((await t.app.inject({ method: 'GET', url: ahead })).statusCode, 404);

    await writeFakeAsset(root, t.workspace.id, 'growing', { durations: [4, 4], progressiveExpectedS: 10 });
    revalidate();
    const grown = await playlist(variant);
    assert.ok(tagsOf(grown.answer.body).includes('#EXT-X-PLAYLIST-TYPE:EVENT'));
    assert.deepEqual(grown.segments.slice(0, 1), first.segments, 'an EVENT playlist only appends');
    assert.equal(grown.segments.length, 2);
    assert.equal((await t.app.inject({ method: 'GET', url: ahead })).statusCode, 200);

    // Packaging ends: manifest.json in place, progressive.json gone (as the asset library publishes).
    await writeFakeAsset(root, t.workspace.id, 'growing', { durations: [4, 4, 2] });
    await rm(join(assetDir(root, t.workspace.id, 'growing'), PROGRESSIVE_FILE));
    revalidate();
    const done = await playlist(variant);
    const doneTags = tagsOf(done.answer.body);
    assert.ok(doneTags.includes('#EXT-X-PLAYLIST-TYPE:VOD') && doneTags.includes('#EXT-X-ENDLIST'), done.answer.body);
    assert.ok(!doneTags.some((l) => l.startsWith('#EXT-X-START')));
    assert.deepEqual(done.segments.slice(0, 2), grown.segments, 'the same URLs before and after the switch');
    assert.deepEqual(done.maps, first.maps);
    assert.equal(done.segments.length, 3);
    assert.equal(done.answer.headers['cache-control'], 'public, max-age=10');
  });

  test('statistics are those of a ready asset: request, manifest and start once per session', async () => {
    await writeFakeAsset(root, t.workspace.id, 'counted', { durations: [4, 4], progressiveExpectedS: 30 });
    const variant = await open('counted', [['pbs', 'progressive-session-1']]);
    const { segments } = await playlist(variant);
    await playlist(variant);
    for (const s of segments) assert.equal((await t.app.inject({ method: 'GET', url: s })).statusCode, 200);
    const kinds = edge.events.filter((e) => e.asset_id === 'counted').map((e) => e.type);
    assert.deepEqual(kinds, ['request', 'manifest', 'start']);
    await t.runtime.playbackEdge.events.flush();
    const stats = await t.client.vodStats.asset('counted');
    assert.deepEqual([stats.stats.sessions.requests, stats.stats.sessions.manifest, stats.stats.sessions.new], [1, 1, 1]);
  });

  test('a slice is planned over the whole expected duration: a slice of what is not packaged yet is accepted and listed as it is packaged', async () => {
    await writeFakeAsset(root, t.workspace.id, 'sliced', { durations: [4], progressiveExpectedS: 20 });
    const variant = await open('sliced', [['sliceStart', '8'], ['sliceStop', '16']]);
    const early = await playlist(variant);
    assert.equal(early.segments.length, 0, 'nothing of 8-16 s packaged yet');
    await writeFakeAsset(root, t.workspace.id, 'sliced', { durations: [4, 4, 4], progressiveExpectedS: 20 });
    revalidate();
    const later = await playlist(variant);
    assert.deepEqual(later.segments.map((s) => s.slice(-13)), ['seg_00002.m4s']);
    // Beyond what the asset will last is refused as for a ready asset.
    const url = t.client.playback.url('sliced', { ttlS: 3600, params: [['sliceStart', '25']] });
    const refused = await t.app.inject({ method: 'GET', url });
    assert.deepEqual([refused.statusCode, refused.headers['x-playback-error-code']], [400, '124']);
  });

  test('packaging that fails midway: the asset\'s files go, and its sessions get 404 / playback error 999 with an error event', async () => {
    await writeFakeAsset(root, t.workspace.id, 'failing', { durations: [4], progressiveExpectedS: 60 });
    const variant = await open('failing', [['pbs', 'progressive-session-2']]);
    const { segments } = await playlist(variant);
    assert.equal((await t.app.inject({ method: 'GET', url: segments[0] as string })).statusCode, 200);
    // What the packaging runner does with a failed asset: nothing of it is kept.
    await rm(assetDir(root, t.workspace.id, 'failing'), { recursive: true });
    await assert.rejects(stat(assetDir(root, t.workspace.id, 'failing')));
    revalidate();
    const reload = await t.app.inject({ method: 'GET', url: variant });
    assert.deepEqual([reload.statusCode, reload.headers['x-playback-error-code']], [404, '999']);
    assert.match(reload.json().detail, /no longer in the library/);
    const segment = await t.app.inject({ method: 'GET', url: segments[0] as string });
    assert.deepEqual([segment.statusCode, segment.headers['x-playback-error-code']], [404, '999']);
    const error = edge.events.findLast((e) => e.type === 'error');
    assert.deepEqual([error?.asset_id, error?.session_id, error?.error_code], ['failing', 'progressive-session-2', 999]);
  });

  test('an ad asset still being packaged is not an ad yet (122), whatever its first segments', async () => {
    await writeFakeAsset(root, t.workspace.id, 'content-1', { durations: [4, 4] });
    await writeFakeAsset(root, t.workspace.id, 'half-ad', { durations: [4], progressiveExpectedS: 15 });
    await t.client.playback.putAdConfig('progressive-ads', { ad_server_url: 'http://127.0.0.1:9/vast', ad_asset_ids: ['half-ad'] });
    const url = t.client.playback.url('content-1', { ttlS: 3600, params: [['ad', 'progressive-ads']] });
    const refused = await t.app.inject({ method: 'GET', url });
    assert.deepEqual([refused.statusCode, refused.headers['x-playback-error-code']], [422, '122']);
  });
});
