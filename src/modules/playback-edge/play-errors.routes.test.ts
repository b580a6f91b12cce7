import { mediaRootOf } from '../../platform/media/media-root.js';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../../../test/helpers/test-app.js';
import type { FakeClock } from '../../platform/clock.js';
import type { PlaybackEvent } from '../vod-stats/events.schema.js';
import { playbackErrorMeaning } from '../vod-stats/playback-error-codes.js';
import { signPlaybackUrl } from './playback-token.js';
import { basePairs, driveClock, testEdge, urlWith, type TestEdge } from './testing/edge-test-kit.js';
import { writeFakeAsset } from './testing/media-fixtures.js';

type Pairs = Array<[string, string]>;

/** One playback error code: how to make a URL that triggers it, and the status it answers with. */
interface Trigger {
  code: number;
  status: number;
  /** Builds the URL (and any setup it needs); the asset id is `asset-<code>`. */
  url(ctx: Ctx): Promise<string> | string;
  ip?: string;
  /** The clock must move for the answer (ad decision timeout). */
  drive?: boolean;
}

interface Ctx {
  t: TestApp;
  id: string;
  expS: number;
  /** A valid URL of asset `id` with these extra parameters, signed with the workspace's API key. */
  valid(extra?: Pairs, o?: { id?: string; kind?: 'asset' | 'event'; key?: string; expiresAt?: number }): string;
  pairs(extra?: Pairs, ct?: string): Pairs;
}

const path = (id: string) => `/play/${id}.m3u8`;

const triggers: Trigger[] = [
  { code: 100, status: 400, url: (c) => c.valid([['dur', '1h']]) },
  { code: 101, status: 400, url: (c) => urlWith(path(c.id), c.pairs().map(([k, v]) => [k, k === 'exp' ? '2026-12-01' : v]), c.t.key.secret) },
  {
    code: 102,
    status: 403,
    async url(c) {
      // The other workspace holds the asset and has not shared its content (a private-asset entry
      // would refuse it too: content-shares.routes.test.ts has both cases).
      await writeFakeAsset(mediaRootOf(c.t.runtime.config), c.t.other.workspace.id, c.id);
      return c.valid([['coid', c.t.other.workspace.id]]);
    },
  },
  { code: 103, status: 400, url: (c) => urlWith(path(c.id), c.pairs().filter(([k]) => k !== 'rn'), c.t.key.secret) },
  { code: 104, status: 410, url: (c) => c.valid([], { expiresAt: c.expS - 7200 }) },
  { code: 105, status: 400, url: (c) => urlWith(path(c.id), c.pairs([], 'e'), c.t.key.secret) },
  { code: 106, status: 400, url: (c) => urlWith(`/play/event/${c.id}.m3u8`, c.pairs([], 'a'), c.t.key.secret) },
  { code: 107, status: 403, url: (c) => urlWith(path(c.id), c.pairs().map(([k, v]) => [k, k === 'cid' ? 'another-asset' : v]), c.t.key.secret) },
  { code: 108, status: 403, url: (c) => urlWith(path(c.id), c.pairs(), null) },
  { code: 109, status: 403, url: (c) => urlWith(path(c.id), c.pairs([['extsid', 'partner-42']]), 'not-the-key') },
  { code: 110, status: 403, url: (c) => urlWith(path(c.id), c.pairs(), 'not-the-key') },
  { code: 111, status: 403, url: (c) => c.valid([['ip', '198.51.100.9']]), ip: '203.0.113.5' },
  {
    code: 112,
    status: 403,
    async url(c) {
      await c.t.client.playback.putDrmPolicy('wv', { provider: 'widevine', settings: { security_level: 1 } });
      const once = c.valid([['drm', 'wv']]);
      assert.equal((await c.t.app.inject({ method: 'GET', url: once })).statusCode, 200);
      return once;
    },
  },
  { code: 113, status: 400, url: (c) => urlWith(path(c.id), c.pairs().map(([k, v]) => [k, k === 'tc' ? '2' : v]), c.t.key.secret) },
  {
    code: 114,
    status: 403,
    async url(c) {
      await c.t.client.playback.putDrmPolicy('wv-bad', { provider: 'widevine', settings: { security_level: 9 } });
      return c.valid([['drm', 'wv-bad']]);
    },
  },
  { code: 115, status: 400, url: (c) => c.valid([['ts', 'yesterday']]) },
  { code: 116, status: 400, url: (c) => c.valid([['delay', '-5']]) },
  { code: 117, status: 400, url: (c) => c.valid([['minDur', '0']]) },
  { code: 118, status: 400, url: (c) => c.valid([['targetDur', '6.5']]) },
  { code: 119, status: 403, url: (c) => c.valid([['kid', 'no-such-key']]) },
  {
    code: 120,
    status: 403,
    async url(c) {
      const key = await c.t.client.playback.createAppKey('player');
      return c.valid([['kid', 'player'], ['kv', '7']], { key: key.secret as string });
    },
  },
  { code: 121, status: 400, url: (c) => c.valid([['ad', 'no-such-config']]) },
  {
    code: 122,
    status: 422,
    async url(c) {
      await c.t.client.playback.putAdConfig('draft', { ad_server_url: 'https://ads.example.com/vast' });
      return c.valid([['ad', 'draft']]);
    },
  },
  { code: 123, status: 400, url: (c) => c.valid([['stopOffset', '1.5']]) },
  { code: 124, status: 400, url: (c) => c.valid([['sliceStart', 'abc']]) },
  { code: 125, status: 400, url: (c) => c.valid([['sliceStop', '0']]) },
  { code: 126, status: 400, url: (c) => c.valid([['startseg', '-1']]) },
  {
    code: 127,
    status: 409,
    async url(c) {
      const url = c.valid([['pbs', 'session-127-a']]);
      assert.equal((await c.t.app.inject({ method: 'GET', url })).statusCode, 200);
      return c.valid([['pbs', 'session-127-a']]);
    },
  },
  { code: 128, status: 400, url: (c) => c.valid([['pbs', 'x y']]) },
  { code: 129, status: 400, url: (c) => c.valid([['hlsver', '3.5']]) },
  {
    code: 130,
    status: 504,
    drive: true,
    async url(c) {
      await writeFakeAsset(mediaRootOf(c.t.runtime.config), c.t.workspace.id, 'slow-ad', { durations: [4] });
      await c.t.client.playback.putAdConfig('slow', { ad_server_url: 'https://ads.example.com/vast', ad_asset_ids: ['slow-ad'], simulated_latency_ms: 5000, timeout_ms: 1000 });
      return c.valid([['ad', 'slow']]);
    },
  },
  { code: 999, status: 404, url: (c) => c.valid([], { id: c.id }).replace('.m3u8?', '.mpd?') },
];

describe('playback edge: every playback error code has a trigger', () => {
  let t: TestApp;
  let edge: TestEdge;
  before(async () => {
    edge = testEdge();
    t = await createTestApp({ overrides: { playbackEdge: edge.overrides } });
    // Every trigger plays a packaged asset of its own (asset-<code>), so only its one problem refuses it.
    for (const { code } of triggers) await writeFakeAsset(mediaRootOf(t.runtime.config), t.workspace.id, `asset-${code}`);
  });
  after(() => t.close());

  test('the triggers cover the whole spec table', () => {
    assert.deepEqual(triggers.map((x) => x.code), Object.keys(playbackErrorMeaning).map(Number));
  });

  for (const trigger of triggers) {
    test(`${trigger.code} ${playbackErrorMeaning[trigger.code]}: HTTP ${trigger.status}, error event, stats errors["${trigger.code}"]`, async () => {
      const id = `asset-${trigger.code}`;
      const expS = Math.floor(t.clock.now() / 1000) + 3600;
      const ctx: Ctx = {
        t,
        id,
        expS,
        pairs: (extra = [], ct = 'a') => [...basePairs({ contentId: id, owner: t.workspace.id, expS, ct }), ...extra],
        valid: (extra = [], o = {}) =>
          signPlaybackUrl(
            { baseUrl: '', kind: o.kind ?? 'asset', contentId: o.id ?? id, owner: t.workspace.id, key: o.key ?? t.key.secret, expiresAt: o.expiresAt ?? expS, params: extra },
            () => 'n0nce',
          ),
      };
      const url = await trigger.url(ctx);
      const before = edge.events.length;
      const request = t.app.inject({ method: 'GET', url, headers: { 'user-agent': 'TestPlayer/1.0' }, remoteAddress: trigger.ip ?? '127.0.0.1' });
      const response = trigger.drive ? await driveClock(Promise.resolve(request), t.clock as FakeClock, 250) : await request;

      assert.equal(response.statusCode, trigger.status, response.body);
      assert.equal(response.headers['x-playback-error-code'], String(trigger.code));
      assert.equal(response.json().playback_error_code, trigger.code);
      const error = edge.events.slice(before).find((e): e is PlaybackEvent => e.type === 'error');
      assert.ok(error, 'an error event was emitted');
      assert.equal(error.error_code, trigger.code);
      assert.equal(error.http_status, trigger.status);
      assert.equal(error.owner, t.workspace.id);
      assert.equal(error.ua, 'TestPlayer/1.0');
      assert.equal(error.ip, trigger.ip ?? '127.0.0.1');
      assert.ok(error.url?.endsWith(url), error.url);

      await t.runtime.playbackEdge.events.flush();
      const stats = await t.client.vodStats.asset(id);
      assert.equal(stats.stats.errors[String(trigger.code)], 1);
    });
  }

  test('122 too when the ad configuration names an ad asset that is not packaged (yet)', async () => {
    await t.client.playback.putAdConfig('unpackaged', { ad_server_url: 'https://ads.example.com/vast', ad_asset_ids: ['ad-still-processing'] });
    const url = signPlaybackUrl({ baseUrl: '', kind: 'asset', contentId: 'asset-122', owner: t.workspace.id, key: t.key.secret, expiresAt: Math.floor(t.clock.now() / 1000) + 60, params: [['ad', 'unpackaged']] }, () => 'n');
    const response = await t.app.inject({ method: 'GET', url });
    assert.deepEqual([response.statusCode, response.headers['x-playback-error-code']], [422, '122']);
    assert.match(response.json().detail, /ad asset ad-still-processing, which is not packaged/);
  });

  test('a URL whose owner is no workspace answers 403 and emits nothing (no report can be linked)', async () => {
    const before = edge.events.length;
    const url = signPlaybackUrl({ baseUrl: '', kind: 'asset', contentId: 'orphan', owner: 'f'.repeat(32), key: 'k', expiresAt: Math.floor(t.clock.now() / 1000) + 60 }, () => 'n');
    const response = await t.app.inject({ method: 'GET', url });
    assert.equal(response.statusCode, 403);
    assert.equal(response.headers['x-playback-error-code'], '110');
    const missingOwner = await t.app.inject({ method: 'GET', url: urlWith('/play/orphan.m3u8', [['tc', '1'], ['exp', '1']], 'k') });
    assert.equal(missingOwner.headers['x-playback-error-code'], '103');
    assert.equal(edge.events.length, before);
  });
});
