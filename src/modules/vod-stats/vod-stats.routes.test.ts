import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp } from '../../../test/helpers/test-app.js';
import type { TestApp } from '../../../test/helpers/test-app.js';
import type { FakeClock } from '../../platform/clock.js';
import type { PlaybackEventInput } from '../../client/vod-stats.js';
import { EventIngestService } from './ingest/event-ingest.service.js';

const STATS = '/api/v4/monitoring/vod-stats';
const T0 = Date.UTC(2026, 10, 21, 10, 0, 0);
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

type Raw = { status: number; headers: Record<string, string>; body: string };
const json = (r: Raw): Record<string, unknown> => JSON.parse(r.body) as Record<string, unknown>;
const problemCode = (r: Raw): string => {
  assert.match(r.headers['content-type'] ?? '', /^application\/problem\+json/);
  return String(json(r).code);
};

/** Checks a `stats` dictionary field by field: names, types, formats. */
const assertStatsShape = (stats: unknown, withAd: boolean) => {
  const s = stats as Record<string, unknown>;
  assert.deepEqual(Object.keys(s), ['type', 'version', 'errors', 'latency', 'sessions']);
  assert.equal(s.type, 'vod');
  assert.equal(s.version, 1);
  assert.equal(typeof s.errors, 'object');
  for (const [code, n] of Object.entries(s.errors as object)) {
    assert.match(code, /^\d{3}$/);
    assert.ok(Number.isInteger(n) && (n as number) > 0);
  }
  const latency = s.latency as Record<string, Record<string, unknown>>;
  assert.deepEqual(Object.keys(latency), withAd ? ['manifest', 'ad'] : ['manifest']);
  for (const kind of Object.values(latency)) {
    assert.deepEqual(Object.keys(kind), ['mean_ms', 'min_ms', 'max_ms']);
    for (const v of Object.values(kind)) assert.equal(typeof v, 'number');
  }
  const sessions = s.sessions as Record<string, unknown>;
  assert.deepEqual(Object.keys(sessions), ['requests', 'manifest', 'ad', 'new']);
  for (const v of Object.values(sessions)) assert.ok(Number.isInteger(v));
};

/** Checks a VodStats object field by field. */
const assertVodStats = (body: unknown, assetId: string, ts: number, withAd = false) => {
  const b = body as Record<string, unknown>;
  assert.deepEqual(Object.keys(b), ['@id', '@type', 'id', 'stats', 'ts', 'ts_iso']);
  assert.equal(b['@id'], `${STATS}/${assetId}`);
  assert.equal(b['@type'], 'VodStats');
  assert.equal(b.id, assetId);
  assert.equal(b.ts, ts);
  assert.ok(Number.isInteger(b.ts));
  assert.match(String(b.ts_iso), ISO);
  assert.equal(b.ts_iso, `${new Date(ts).toISOString().slice(0, -1)}000Z`);
  assertStatsShape(b.stats, withAd);
};

describe('VOD statistics endpoints', () => {
  let t: TestApp;
  let clock: FakeClock;
  let owner: string;
  const ingest = async (...events: Partial<PlaybackEventInput>[]) => {
    const result = await t.client.vodStats.ingest(events.map((e) => ({ owner, session_id: 's', ...e })));
    assert.equal(result.rejected.length, 0, JSON.stringify(result.rejected));
  };
  const get = (path: string, query?: Record<string, string | number>) => t.client.core.send('GET', path, query ? { query } : {});

  before(async () => {
    t = await createTestApp();
    clock = t.clock as FakeClock;
    owner = t.workspace.id;
    // Timeline: "busy" gets 3 sessions; "ads" has ad latency and errors; "quiet" only a request.
    await ingest(
      { type: 'start', asset_id: 'busy', session_id: 'b1', ts: T0 - 50_000 },
      { type: 'start', asset_id: 'busy', session_id: 'b2', ts: T0 - 40_000 },
      { type: 'manifest', asset_id: 'busy', session_id: 'b1', latency_ms: 10, ts: T0 - 50_000 },
      { type: 'manifest', asset_id: 'busy', session_id: 'b2', latency_ms: 25.5, ts: T0 - 40_000 },
      { type: 'manifest', asset_id: 'busy', session_id: 'b3', latency_ms: 11.25, ts: T0 - 30_000 },
      { type: 'start', asset_id: 'busy', session_id: 'b3', ts: T0 - 30_000 },
      { type: 'start', asset_id: 'ads', session_id: 'x1', ts: T0 - 20_000 },
      { type: 'ad', asset_id: 'ads', session_id: 'x1', latency_ms: 300, ts: T0 - 20_000 },
      { type: 'error', asset_id: 'ads', session_id: 'x2', error_code: 103, ts: T0 - 25_000 },
      { type: 'error', asset_id: 'ads', session_id: 'x3', error_code: 103, ts: T0 - 24_000 },
      { type: 'error', asset_id: 'ads', session_id: 'x3', error_code: 103, ts: T0 - 23_000 },
      { type: 'request', asset_id: 'quiet', session_id: 'q1', ts: T0 - 10_000 },
    );
    await t.other.client.vodStats.ingest([{ type: 'start', owner: t.other.workspace.id, asset_id: 'foreign', session_id: 'f' }]);
  });
  after(() => t.close());

  test('single asset: every field, errors {} and no ad latency when there are none', async () => {
    const r = await get(`${STATS}/busy`);
    assert.equal(r.status, 200);
    assert.match(r.headers['content-type'] ?? '', /^application\/json/);
    const body = json(r);
    assertVodStats(body, 'busy', T0 - 30_000);
    assert.deepEqual(body.stats, {
      type: 'vod',
      version: 1,
      errors: {},
      latency: { manifest: { mean_ms: 15.583, min_ms: 10, max_ms: 25.5 } },
      sessions: { requests: 0, manifest: 3, ad: 0, new: 3 },
    });
  });

  test('single asset with ads and errors: two sessions with one code count two, ad latency shown', async () => {
    const body = json(await get(`${STATS}/ads`));
    assertVodStats(body, 'ads', T0 - 20_000, true);
    assert.deepEqual(body.stats, {
      type: 'vod',
      version: 1,
      errors: { '103': 2 },
      latency: { manifest: { mean_ms: 0, min_ms: 0, max_ms: 0 }, ad: { mean_ms: 300, min_ms: 300, max_ms: 300 } },
      sessions: { requests: 0, manifest: 0, ad: 1, new: 1 },
    });
  });

  test('an asset with requests but no start is anchored at its latest event', async () => {
    const body = json(await get(`${STATS}/quiet`));
    assertVodStats(body, 'quiet', T0 - 10_000);
    assert.deepEqual((body.stats as { sessions: unknown }).sessions, { requests: 1, manifest: 0, ad: 0, new: 0 });
  });

  test('unknown asset and another workspace asset are 404 stats_not_found', async () => {
    for (const id of ['nope', 'foreign']) {
      const r = await get(`${STATS}/${id}`);
      assert.equal(r.status, 404);
      assert.equal(problemCode(r), 'stats_not_found');
    }
  });

  test('all assets: Collection, most new sessions first, ties by most recent ts, total_items = items', async () => {
    const r = await get(STATS);
    assert.equal(r.status, 200);
    const body = json(r);
    assert.deepEqual(Object.keys(body), ['@id', '@type', 'items', 'total_items']);
    assert.equal(body['@id'], STATS);
    assert.equal(body['@type'], 'Collection');
    const items = body.items as Record<string, unknown>[];
    assert.deepEqual(items.map((i) => i.id), ['busy', 'ads', 'quiet']);
    assert.equal(body.total_items, items.length);
    assertVodStats(items[0], 'busy', T0 - 30_000);
    assertVodStats(items[1], 'ads', T0 - 20_000, true);
    const owned = json(await get(STATS, { owner, top: 2 }));
    assert.deepEqual((owned.items as { id: string }[]).map((i) => i.id), ['busy', 'ads']);
    assert.equal(owned.total_items, 2);
  });

  test('all assets: top 0, 101, "x" and 1.5 are 400; another owner is 403', async () => {
    for (const top of ['0', '101', 'x', '1.5', '-1']) {
      const r = await get(STATS, { top });
      assert.equal(r.status, 400, `top=${top}`);
      assert.equal(problemCode(r), 'validation_failed');
    }
    for (const top of ['1', '100']) assert.equal((await get(STATS, { top })).status, 200);
    const r = await get(STATS, { owner: t.other.workspace.id });
    assert.equal(r.status, 403);
    assert.equal(problemCode(r), 'forbidden_workspace');
  });

  test('search (POST and GET): known ids in the order asked, unknown and foreign ids left out', async () => {
    const posted = await t.client.core.send('POST', `${STATS}/search`, { body: { asset_ids: ['quiet', 'nope', 'busy', 'foreign', 'busy'] } });
    assert.equal(posted.status, 200);
    const body = json(posted);
    assert.equal(body['@id'], `${STATS}/search`);
    assert.equal(body['@type'], 'Collection');
    assert.deepEqual((body.items as { id: string }[]).map((i) => i.id), ['quiet', 'busy']);
    assert.equal(body.total_items, 2);
    assertVodStats((body.items as unknown[])[1], 'busy', T0 - 30_000);
    const got = json(await get(`${STATS}/search`, { asset_ids: 'ads, nope,busy' }));
    assert.deepEqual((got.items as { id: string }[]).map((i) => i.id), ['ads', 'busy']);
    assert.equal(got.total_items, 2);
    assert.deepEqual(json(await get(`${STATS}/search`, { asset_ids: 'nope' })).items, []);
  });

  test('search: 1001 ids, an empty list, no list are 400', async () => {
    const ids = Array.from({ length: 1001 }, (_, i) => `id${i}`);
    for (const body of [{ asset_ids: ids }, { asset_ids: [] }, {}, { asset_ids: [''] }, { asset_ids: 'busy' }]) {
      const r = await t.client.core.send('POST', `${STATS}/search`, { body });
      assert.equal(r.status, 400, JSON.stringify(body).slice(0, 40));
      assert.equal(problemCode(r), 'validation_failed');
    }
    assert.equal((await t.client.core.send('POST', `${STATS}/search`, { body: { asset_ids: ids.slice(0, 1000) } })).status, 200);
    for (const query of [{ asset_ids: ids.join(',') }, { asset_ids: '' }, { asset_ids: ' , ' }]) {
      const r = await get(`${STATS}/search`, query);
      assert.equal(r.status, 400);
      assert.equal(problemCode(r), 'validation_failed');
    }
    assert.equal((await get(`${STATS}/search`)).status, 400);
  });

  test('duplicate and trailing slashes are tolerated', async () => {
    const posted = await t.client.core.send('POST', '/api/v4//monitoring/vod-stats/search', { body: { asset_ids: ['busy'] } });
    assert.equal(posted.status, 200);
    assert.equal(json(posted).total_items, 1);
    assert.equal((await get('/api/v4//monitoring//vod-stats/busy')).status, 200);
    assert.equal((await get(`${STATS}/busy/`)).status, 200);
    assert.equal((await get(`${STATS}/owner-summary/`)).status, 200);
  });

  test('owner summary (with and without the path variable): the last 3 minutes of every asset', async () => {
    clock.set(T0 + 5_000);
    for (const path of [`${STATS}/owner-summary/${owner}`, `${STATS}/owner-summary`]) {
      const r = await get(path);
      assert.equal(r.status, 200);
      const body = json(r);
      assert.deepEqual(Object.keys(body), ['@id', '@type', 'stats', 'owner', 'ts', 'ts_iso']);
      assert.equal(body['@id'], `${STATS}/owner-summary/${owner}`);
      assert.equal(body['@type'], 'VodStatsSummary');
      assert.equal(body.owner, owner);
      assert.equal(body.ts, T0 + 5_000);
      assert.equal(body.ts_iso, '2026-11-21T10:00:05.000000Z');
      assertStatsShape(body.stats, true);
      assert.deepEqual((body.stats as { sessions: unknown }).sessions, { requests: 1, manifest: 3, ad: 1, new: 4 });
      assert.deepEqual((body.stats as { errors: unknown }).errors, { '103': 2 });
    }
    const other = await get(`${STATS}/owner-summary/${t.other.workspace.id}`);
    assert.equal(other.status, 403);
    assert.equal(problemCode(other), 'forbidden_workspace');
    clock.set(T0 + 3 * 60_000);
    const later = json(await get(`${STATS}/owner-summary`));
    assert.deepEqual((later.stats as { sessions: unknown }).sessions, { requests: 0, manifest: 0, ad: 0, new: 0 });
    assert.deepEqual((later.stats as { errors: unknown }).errors, {});
    assert.deepEqual((later.stats as { latency: unknown }).latency, { manifest: { mean_ms: 0, min_ms: 0, max_ms: 0 } });
  });

  test('timeline: a new start moves the window; duplicates count once; 24 h later the asset is gone', async () => {
    const start = T0 + 10 * 60_000;
    clock.set(start);
    await ingest(
      { type: 'start', asset_id: 'busy', session_id: 'n1', ts: start - 2 },
      { type: 'start', asset_id: 'busy', session_id: 'n1', ts: start - 2 },
      { type: 'start', asset_id: 'busy', session_id: 'n1', ts: start },
    );
    const moved = json(await get(`${STATS}/busy`));
    assert.equal(moved.ts, start, 'ts is the most recent start event');
    assert.deepEqual((moved.stats as { sessions: unknown }).sessions, { requests: 0, manifest: 0, ad: 0, new: 1 });
    // busy and ads tie on new sessions (1 each): the most recent ts goes first.
    assert.deepEqual((json(await get(STATS)).items as { id: string }[]).map((i) => i.id), ['busy', 'ads', 'quiet']);
    clock.set(start + 24 * 3600_000 + 1);
    assert.equal((await get(`${STATS}/busy`)).status, 404);
    assert.deepEqual(json(await get(STATS)).items, []);
    clock.advance(60_000);
    // The prune runs once a snapshot copy the jump in time may have started is written (a frozen store prunes nothing).
    const { ingest: pipeline } = t.runtime.vodStats;
    if (pipeline instanceof EventIngestService) await pipeline.drain();
    const size = await t.runtime.vodStats.store.size();
    assert.equal(size.assets, 0, 'within a minute the prune timer frees expired assets');
  });
});
