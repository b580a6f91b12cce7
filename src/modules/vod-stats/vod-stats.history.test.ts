import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { testRedis } from '../../../test/helpers/redis.js';
import { createTestApp } from '../../../test/helpers/test-app.js';
import { FakeClock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import { PlaylineApiError } from '../../client/index.js';
import type { StatsStore } from './store/stats-store.js';
import { MemoryStatsStore } from './store/memory-stats-store.js';
import { RedisStatsStore } from './store/redis-stats-store.js';
import { playbackEvent as ev } from './test-events.test-support.js';
import type { HistoryQuery } from './vod-stats.schema.js';
import { VodStatsService } from './vod-stats.service.js';
import { vodStatsHistoryBody } from './vod-stats.view.js';

const at = (h: number, m: number, s = 0): number => Date.UTC(2026, 10, 21, h, m, s);
const sec = (ms: number): number => Math.floor(ms / 1000);

type StoreFactory = (clock: FakeClock, delayMs: number) => { store: StatsStore; close(): Promise<void> };

const redis = await testRedis();
after(() => redis.cleanup());

/** The history query (service + view) over each store: the same answers from both. */
const historyConformance = (name: string, factory: StoreFactory, skip: string | false): void => {
  describe(`vod-stats history on ${name}`, { skip }, () => {
    const setup = (delayMs = 0) => {
      const clock = new FakeClock(at(10, 0));
      const { store, close } = factory(clock, delayMs);
      const service = new VodStatsService(store, clock);
      const history = async (query: HistoryQuery) => vodStatsHistoryBody(await service.history('ws1', query));
      const receive = async (when: number, ...events: ReturnType<typeof ev>[]) => {
        clock.set(when);
        await store.record(events, when);
      };
      return { clock, store, history, receive, close };
    };

    test('per-minute points: sessions, requests, errors by code and rate, latency mean/max, rebuffers, startup', async () => {
      const s = setup();
      try {
        await s.receive(
          at(10, 30, 20),
          ev('request', 'a1', 's1', at(10, 28, 1)),
          ev('manifest', 'a1', 's1', at(10, 28, 2), { latency_ms: 100 }),
          ev('ad', 'a1', 's1', at(10, 28, 3), { latency_ms: 40 }),
          ev('start', 'a1', 's1', at(10, 28, 4), { startup_ms: 800 }),
          ev('request', 'a1', 's2', at(10, 28, 10)),
          ev('manifest', 'a1', 's2', at(10, 28, 11), { latency_ms: 300 }),
          ev('start', 'a1', 's2', at(10, 28, 12), { startup_ms: 1200 }),
          ev('request', 'a2', 's3', at(10, 30, 1)),
          ev('request', 'a2', 's4', at(10, 30, 2)),
          ev('error', 'a2', 's3', at(10, 30, 3), { error_code: 104 }),
          ev('error', 'a2', 's3', at(10, 30, 4), { error_code: 104 }),
          ev('rebuffer', 'a1', 's1', at(10, 30, 5)),
        );
        const body = await s.history({ range: '1h' });
        assert.equal(body['@type'], 'VodStatsHistory');
        assert.deepEqual([body.owner, body.asset_id, body.from, body.to, body.step_s], ['ws1', null, sec(at(9, 30, 20)), sec(at(10, 30, 20)), 60]);
        assert.equal(body.total_points, 2, 'minutes without events are left out');
        const [first, second] = body.points;
        assert.deepEqual(first, {
          ts: at(10, 28),
          ts_iso: '2026-11-21T10:28:00.000000Z',
          sessions: { requests: 2, manifest: 2, ad: 1, new: 2 },
          errors: {},
          error_sessions: 0,
          error_rate: 0,
          latency: { manifest: { samples: 2, mean_ms: 200, min_ms: 100, max_ms: 300 }, ad: { samples: 1, mean_ms: 40, min_ms: 40, max_ms: 40 } },
          rebuffers: 0,
          startup: { samples: 2, mean_ms: 1000, max_ms: 1200 },
        });
        assert.deepEqual(
          [second?.ts, second?.sessions, second?.errors, second?.error_sessions, second?.error_rate, second?.rebuffers, second?.latency.manifest],
          [at(10, 30), { requests: 2, manifest: 0, ad: 0, new: 0 }, { 104: 1 }, 1, 0.5, 1, { samples: 0, mean_ms: 0, min_ms: 0, max_ms: 0 }],
          'a session with one code counts once; the rate is error sessions per request',
        );
        const a1 = await s.history({ asset_id: 'a1', range: '15m' });
        assert.deepEqual(a1.points.map((p) => [p.ts, p.sessions.new, p.rebuffers]), [[at(10, 28), 2, 0], [at(10, 30), 0, 1]], 'one asset: its own minutes only');
        assert.equal(a1.asset_id, 'a1');
      } finally {
        await s.close();
      }
    });

    test('ranges: named ranges end now, from/to are inclusive by minute and clamped to the 24-hour window', async () => {
      const s = setup();
      try {
        const old = at(10, 0) + 3600_000 - 23.5 * 3600_000;
        await s.receive(at(11, 0), ev('start', 'a1', 'x', old), ev('start', 'a1', 'y', at(10, 50)), ev('start', 'a1', 'z', at(10, 59, 30)));
        const points = async (query: HistoryQuery) => (await s.history(query)).points.map((p) => p.ts);
        assert.deepEqual(await points({ range: '15m' }), [at(10, 50), at(10, 59)]);
        assert.deepEqual(await points({ range: '6h' }), [at(10, 50), at(10, 59)]);
        assert.deepEqual(await points({ range: '24h' }), [old, at(10, 50), at(10, 59)]);
        assert.deepEqual(await points({}), [at(10, 50), at(10, 59)], 'the default is the last hour');
        assert.deepEqual(await points({ from: sec(at(10, 50, 59)), to: sec(at(10, 50, 59)) }), [at(10, 50)], 'a second inside a minute selects that minute');
        const clamped = await s.history({ from: 0, to: sec(at(23, 0)) });
        assert.deepEqual([clamped.from, clamped.to], [sec(at(11, 0)) - 86_400, sec(at(11, 0))], 'clamped to the serving window');
        assert.equal(clamped.total_points, 3);

        const refused = async (query: HistoryQuery, path: string, message: RegExp) =>
          assert.rejects(s.history(query), (err: unknown) => {
            assert.ok(err instanceof AppError);
            assert.equal(err.code, 'validation_failed');
            assert.equal(err.errors?.[0]?.path, path);
            assert.match(err.message, message);
            return true;
          });
        await refused({ from: 0, to: sec(at(11, 0)) - 86_401 }, '/querystring/to', /before the 24-hour serving window, which starts at 2026-11-20T11:00:00Z/);
        await refused({ from: sec(at(11, 0, 1)) }, '/querystring/from', /in the future/);
        await refused({ from: sec(at(10, 30)), to: sec(at(10, 20)) }, '/querystring/from', /is after to/);
        await refused({ range: '1h', from: sec(at(10, 30)) }, '/querystring/range', /either range or from\/to/);
        await assert.rejects(s.history({ asset_id: 'never-seen' }), (err: unknown) => err instanceof AppError && err.code === 'stats_not_found');
      } finally {
        await s.close();
      }
    });

    test('the stats delay applies: an event shows in the history only once it is visible', async () => {
      const s = setup(180_000);
      try {
        await s.receive(at(10, 5), ev('start', 'a1', 's1', at(10, 5)));
        assert.equal((await s.history({ range: '15m' })).total_points, 0, 'not yet visible');
        s.clock.set(at(10, 8));
        assert.deepEqual((await s.history({ range: '15m' })).points.map((p) => [p.ts, p.sessions.new]), [[at(10, 5), 1]]);
      } finally {
        await s.close();
      }
    });
  });
};

historyConformance('MemoryStatsStore (embedded)', (clock, delayMs) => ({ store: new MemoryStatsStore({ clock, delayMs }), close: async () => undefined }), false);
historyConformance(
  'RedisStatsStore (cluster)',
  (clock, delayMs) => {
    const client = redis.client();
    return { store: new RedisStatsStore({ redis: client, clock, prefix: redis.prefix(), pruneMarginMs: 0, delayMs }), close: async () => client.quit().then(() => undefined) };
  },
  redis.skip,
);

describe('GET /api/v4/monitoring/vod-stats/history', () => {
  test('signed, from the SDK: the workspace and one asset; bad input is a 400 problem', async () => {
    const t = await createTestApp();
    try {
      const owner = t.workspace.id;
      const clock = t.clock as FakeClock;
      const start = clock.now();
      await t.client.vodStats.ingest([
        { type: 'request', owner, asset_id: 'clip', session_id: 's1' },
        { type: 'manifest', owner, asset_id: 'clip', session_id: 's1', latency_ms: 90 },
        { type: 'start', owner, asset_id: 'clip', session_id: 's1' },
      ]);
      clock.advance(120_000);
      await t.client.vodStats.ingest([{ type: 'error', owner, asset_id: 'clip', session_id: 's2', error_code: 103 }]);
      const all = await t.client.vodStats.history({ range: '15m' });
      assert.equal(all['@id'], '/api/v4/monitoring/vod-stats/history');
      assert.deepEqual(all.points.map((p) => [p.ts, p.sessions.new, p.sessions.requests, p.errors, p.latency.manifest.mean_ms]), [
        [start, 1, 1, {}, 90],
        [start + 120_000, 0, 0, { 103: 1 }, 0],
      ]);
      assert.equal(all.points[1]?.error_rate, 1, 'an error without a request is a rate of 1, never more');
      const clip = await t.client.vodStats.history({ asset_id: 'clip', from: sec(start), to: sec(start) + 59 });
      assert.deepEqual(clip.points.map((p) => p.ts), [start]);

      const bad = await t.client.core.send('GET', '/api/v4/monitoring/vod-stats/history', { query: { range: '2h' } });
      assert.equal(bad.status, 400);
      assert.match(bad.headers['content-type'] ?? '', /^application\/problem\+json/);
      for (const query of [{ to: 1e15 }, { from: -1 }, { from: 'yesterday' }, { asset_id: '' }]) {
        const refused = await t.client.core.send('GET', '/api/v4/monitoring/vod-stats/history', { query });
        assert.equal(refused.status, 400, JSON.stringify(query));
        assert.equal(JSON.parse(refused.body).code, 'validation_failed');
      }
      const outside = await t.client.core.send('GET', '/api/v4/monitoring/vod-stats/history', { query: { to: sec(start) - 2 * 86_400 } });
      assert.equal(outside.status, 400);
      assert.match(JSON.parse(outside.body).detail as string, /before the 24-hour serving window/);
      await assert.rejects(t.client.vodStats.history({ asset_id: 'other' }), (err: unknown) => err instanceof PlaylineApiError && err.status === 404);
      // Another workspace sees only its own (empty) history.
      assert.equal((await t.other.client.vodStats.history({ range: '24h' })).total_points, 0);
      const unsigned = await t.app.inject({ method: 'GET', url: '/api/v4/monitoring/vod-stats/history' });
      assert.equal(unsigned.statusCode, 401);
    } finally {
      await t.close();
    }
  });
});
