import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../../platform/clock.js';
import type { PlaybackEvent } from '../events.schema.js';
import type { StatsStore } from './stats-store.js';
import { playbackEvent as ev, seededRandom } from '../test-events.test-support.js';
import { statsStoreDifferentialTests } from './stats-store.differential.test-support.js';
import { statsBody } from '../vod-stats.view.js';

/** A store under test on a given clock; `close` releases what it holds (keys, connections). */
export interface StoreUnderTest {
  store: StatsStore;
  close(): Promise<void>;
  /** The same state in a new store object, as a process restart finds it (memory: through a snapshot; Redis: the same keys). */
  restart(): Promise<StatsStore>;
}

export interface StoreOptions {
  delayMs?: number;
  maxAssetsPerWorkspace?: number;
}

/** Makes an empty store. Stores must prune exactly at the clock (no safety margin) for the size checks. */
export type StoreFactory = (clock: FakeClock, options: StoreOptions) => Promise<StoreUnderTest>;

export const at = (h: number, m: number, s = 0, ms = 0): number => Date.UTC(2026, 10, 21, h, m, s, ms);

/** A store at 2026-11-21T10:00Z, and `receive` that moves the clock to the receipt time first. */
export const setup = async (factory: StoreFactory, options: StoreOptions = {}) => {
  const clock = new FakeClock(at(10, 0));
  const { store, close } = await factory(clock, options);
  const receive = async (when: number, ...events: PlaybackEvent[]) => {
    clock.set(when);
    await store.record(events, when);
  };
  return { clock, store, receive, close };
};

/**
 * The behaviour every StatsStore must show (DESIGN §3.2), as one suite run against each
 * implementation: the embedded MemoryStatsStore and the cluster RedisStatsStore. Expected values
 * are spelled out; the differential part then checks random traffic against the embedded store.
 */
export function statsStoreConformance(name: string, factory: StoreFactory, skip: string | false = false): void {
  describe(`StatsStore conformance: ${name}`, { skip }, () => {
    const scenario = (title: string, options: StoreOptions, body: (s: Awaited<ReturnType<typeof setup>>) => Promise<void>): void => {
      test(title, async () => {
        const s = await setup(factory, options);
        try {
          await body(s);
        } finally {
          await s.close();
        }
      });
    };

    scenario('a session started at T counts in its asset window and ts is that start', {}, async ({ store, receive }) => {
      const T = at(10, 4, 5, 123);
      await receive(T, ev('request', 'a1', 's1', T - 2000), ev('manifest', 'a1', 's1', T - 1000, { latency_ms: 40 }), ev('start', 'a1', 's1', T));
      const a1 = await store.get('ws1', 'a1');
      assert.equal(a1?.ts, T);
      assert.deepEqual({ requests: a1?.stats.requests, manifest: a1?.stats.manifest, ad: a1?.stats.ad, new: a1?.stats.new }, { requests: 1, manifest: 1, ad: 0, new: 1 });
      assert.deepEqual(a1?.stats.manifestLatency, { min: 40, max: 40, sum: 40, count: 1 });
      assert.equal(a1?.stats.adLatency.count, 0);
      assert.equal(await store.get('ws1', 'unknown'), undefined);
      assert.equal(await store.get('ws2', 'a1'), undefined, 'assets are per workspace');
    });

    scenario('the asset window is the 180 s ending at the second of its latest start, exact to the second', {}, async ({ store, receive }) => {
      const T = at(10, 10, 0, 500);
      await receive(
        T,
        ev('start', 'a1', 'in-170', T - 170_000),
        ev('request', 'a1', 'in-170', T - 170_000),
        ev('start', 'a1', 'in-179', T - 179_000),
        ev('start', 'a1', 'out-180', T - 180_000),
        ev('start', 'a1', 'out-181', T - 181_000),
        ev('error', 'a1', 'out-181', T - 181_000, { error_code: 104 }),
        ev('start', 'a1', 'latest', T),
      );
      let a1 = await store.get('ws1', 'a1');
      assert.deepEqual([a1?.ts, a1?.stats.new, a1?.stats.requests, a1?.stats.errors.size], [T, 3, 1, 0]);
      // After the latest start: not in the window (its end is the start).
      await receive(T + 2000, ev('request', 'a1', 'later', T + 1000), ev('manifest', 'a1', 'later', T + 1000, { latency_ms: 9 }));
      a1 = await store.get('ws1', 'a1');
      assert.deepEqual([a1?.ts, a1?.stats.requests, a1?.stats.manifest], [T, 1, 0]);
      // A later start moves the window and brings them in.
      await receive(T + 2000, ev('start', 'a1', 'later', T + 2000));
      a1 = await store.get('ws1', 'a1');
      assert.deepEqual([a1?.ts, a1?.stats.new, a1?.stats.requests, a1?.stats.manifest], [T + 2000, 3, 2, 1], 'in-179 (181 s before it) is out');
      await receive(T + 10_000, ev('start', 'a1', 'last', T + 10_000));
      assert.deepEqual([(await store.get('ws1', 'a1'))?.stats.new], [3], 'in-170 (180 s before) drops out, last comes in');
    });

    scenario('the owner summary covers exactly the 180 s before the query, whatever the second of the minute', {}, async ({ clock, store, receive }) => {
      const start = at(10, 0, 0);
      await receive(start, ev('start', 'a1', 's1', start), ev('error', 'a1', 's1', start, { error_code: 104 }));
      clock.set(start + 179_999);
      assert.deepEqual([(await store.summary('ws1')).stats.errors.get(104)], [1], '179.999 s after: still in');
      clock.set(start + 180_000);
      assert.equal((await store.summary('ws1')).stats.errors.size, 0, '180 s after: out');
      assert.equal((await store.get('ws1', 'a1'))?.stats.new, 1, 'the asset window does not move with time');
      for (const [i, second] of [5, 30, 59].entries()) {
        const now = at(10, 10 + 10 * i, second);
        await receive(now, ev('start', 'a2', `q${second}`, now - 150_000), ev('start', 'a2', `old${second}`, now - 181_000));
        const summary = await store.summary('ws1');
        assert.equal(summary.ts, now);
        assert.equal(summary.stats.new, 1, `query at second ${second}: the start 150 s old counts, the one 181 s old does not`);
        clock.set(now + 200_000);
        assert.equal((await store.summary('ws1')).stats.new, 0);
      }
      assert.equal((await store.summary('nobody')).stats.new, 0);
    });

    scenario('late events count where they belong: an asset whose only session is 7 minutes or 23 hours old is served', {}, async ({ store, receive }) => {
      const now = at(10, 30);
      const seven = now - 7 * 60_000;
      const day = now - 23 * 3600_000;
      await receive(now, ev('request', 'late7', 's', seven - 2000), ev('manifest', 'late7', 's', seven - 1000, { latency_ms: 12 }), ev('start', 'late7', 's', seven));
      await receive(now, ev('start', 'late23', 's', day), ev('error', 'late23', 's', day + 1000, { error_code: 110 }));
      const late7 = await store.get('ws1', 'late7');
      assert.deepEqual([late7?.ts, late7?.stats.new, late7?.stats.requests, late7?.stats.manifest], [seven, 1, 1, 1]);
      const late23 = await store.get('ws1', 'late23');
      assert.deepEqual([late23?.ts, late23?.stats.new, late23?.stats.errors.size], [day, 1, 0], 'the error came after the start');
      // A late start that is not the latest still counts in the window it falls in.
      await receive(now + 1000, ev('start', 'late7', 'older', seven - 60_000));
      assert.equal((await store.get('ws1', 'late7'))?.stats.new, 2);
      // Too old for the current window: counted (history), not shown in the window.
      await receive(now + 2000, ev('start', 'late7', 'ancient', seven - 181_000));
      assert.equal((await store.get('ws1', 'late7'))?.stats.new, 2);
      assert.equal((await store.summary('ws1')).stats.new, 0, 'none of them is in the last 180 s');
    });

    test('late events: a start 7 minutes and one 23 hours old are served after a restart too', async () => {
      const clock = new FakeClock(at(10, 30));
      const under = await factory(clock, {});
      try {
        const now = clock.now();
        await under.store.record([ev('start', 'late7', 's', now - 7 * 60_000), ev('start', 'late23', 's', now - 23 * 3600_000)], now);
        const again = await under.restart();
        assert.deepEqual([(await again.get('ws1', 'late7'))?.ts, (await again.get('ws1', 'late7'))?.stats.new], [now - 7 * 60_000, 1]);
        assert.deepEqual([(await again.get('ws1', 'late23'))?.ts, (await again.get('ws1', 'late23'))?.stats.new], [now - 23 * 3600_000, 1]);
        assert.deepEqual((await again.top('ws1', 10)).map((a) => a.assetId), ['late7', 'late23']);
      } finally {
        await under.close();
      }
    });

    scenario('a first start reported after later events of its asset still gets its exact window', {}, async ({ store, receive }) => {
      const T = at(10, 10);
      await receive(T, ev('request', 'a1', 's1', T - 100_000), ev('error', 'a1', 's2', T, { error_code: 103 }));
      assert.equal((await store.get('ws1', 'a1'))?.ts, T, 'no start yet: the latest event anchors');
      await receive(T + 60_000, ev('request', 'a1', 's3', T + 60_000));
      await receive(T + 120_000, ev('start', 'a1', 's1', T - 90_000));
      const a1 = await store.get('ws1', 'a1');
      assert.deepEqual([a1?.ts, a1?.stats.new, a1?.stats.requests, a1?.stats.errors.size], [T - 90_000, 1, 1, 0]);
    });

    scenario('a workspace holds at most the configured number of assets; events for more are dropped and said so', { maxAssetsPerWorkspace: 3 }, async ({ clock, store, receive }) => {
      const T = at(10, 0);
      clock.set(T);
      const first = await store.record([ev('start', 'a1', 's', T), ev('start', 'a2', 's', T), ev('start', 'a3', 's', T)], T);
      assert.deepEqual(first.dropped, []);
      const more = await store.record([ev('start', 'a4', 's', T), ev('start', 'a1', 's2', T), ev('request', 'a5', 's', T), ev('start', 'b1', 's', T, { owner: 'ws2' })], T);
      assert.deepEqual(more.dropped, [0, 2], 'new assets past the limit; known assets and other workspaces still count');
      assert.equal(await store.get('ws1', 'a4'), undefined);
      assert.equal((await store.get('ws1', 'a1'))?.stats.new, 2);
      assert.equal((await store.get('ws2', 'b1'))?.stats.new, 1);
      await receive(T + 60_000, ev('start', 'a1', 's3', T + 60_000));
      clock.set(T + 24 * 3600_000 + 1);
      const later = await store.record([ev('start', 'a4', 's', clock.now())], clock.now());
      assert.deepEqual(later.dropped, [], 'expired assets make room (prune or not)');
      assert.deepEqual((await store.top('ws1', 100)).map((a) => a.assetId).sort(), ['a1', 'a4']);
    });

    scenario('history: every counted event is in its minute, late ones too, with playback quality beside', {}, async ({ store, receive }) => {
      const now = at(10, 30, 20);
      const day = now - 23 * 3600_000;
      await receive(
        now,
        ev('request', 'a1', 's1', at(10, 29, 5)),
        ev('manifest', 'a1', 's1', at(10, 29, 6), { latency_ms: 40 }),
        ev('start', 'a1', 's1', at(10, 29, 7), { startup_ms: 900 }),
        ev('start', 'a1', 's1', at(10, 29, 8), { startup_ms: 5000 }),
        ev('start', 'a1', 's2', at(10, 30, 1), { startup_ms: 300 }),
        ev('rebuffer', 'a1', 's2', at(10, 30, 9)),
        ev('rebuffer', 'a1', 's2', at(10, 30, 10)),
        ev('error', 'a1', 's3', at(10, 30, 11), { error_code: 103 }),
        ev('start', 'old', 's', day),
        ev('rebuffer', 'never-seen', 's', at(10, 30, 12)),
      );
      const points = (await store.history('ws1', 'a1', now - 3600_000, now)) ?? [];
      assert.deepEqual(points.map((p) => [p.ts, p.stats.requests, p.stats.manifest, p.stats.new, Object.fromEntries(p.stats.errors), p.rebuffers, p.startup]), [
        [at(10, 29), 1, 1, 1, {}, 0, { count: 1, sum: 900, max: 900 }],
        [at(10, 30), 0, 0, 1, { 103: 1 }, 2, { count: 1, sum: 300, max: 300 }],
      ], 'the duplicate start (and its startup) counts once');
      assert.deepEqual(points[0]?.stats.manifestLatency, { min: 40, max: 40, sum: 40, count: 1 });
      const all = (await store.history('ws1', undefined, 0, now)) ?? [];
      assert.deepEqual(all.map((p) => [p.ts, p.stats.new, p.rebuffers]), [[Math.floor(day / 60_000) * 60_000, 1, 0], [at(10, 29), 1, 0], [at(10, 30), 1, 3]]);
      assert.deepEqual(await store.history('ws1', 'a1', at(10, 30), at(10, 30, 59)).then((p) => p?.map((x) => x.ts)), [at(10, 30)], 'the range is inclusive by minute');
      assert.equal(await store.history('ws1', 'never-seen', 0, now), undefined, 'a rebuffer report creates no asset');
      assert.deepEqual(await store.history('ws2', undefined, 0, now), []);
    });

    scenario('workspace-only events count in the owner summary and history, never as an asset', {}, async ({ store, receive }) => {
      const T = at(10, 5);
      await receive(
        T,
        ev('request', 'unknown', 'x1', T, { workspace_only: true }),
        ev('error', 'unknown', 'x1', T, { error_code: 999, workspace_only: true }),
        ev('error', 'unknown', 'x1', T, { error_code: 999, workspace_only: true }),
        ev('start', 'known', 's1', T),
      );
      const summary = await store.summary('ws1');
      assert.deepEqual([summary.stats.requests, summary.stats.errors.get(999), summary.stats.new], [1, 1, 1], 'the same session and code count once, as for an asset');
      assert.equal(await store.get('ws1', 'unknown'), undefined);
      assert.deepEqual((await store.top('ws1', 100)).map((a) => a.assetId), ['known']);
      assert.equal((await store.size()).assets, 1);
    });

    scenario('an asset disappears 24 h after its last start and its storage is reclaimed', {}, async ({ clock, store, receive }) => {
      const T = at(10, 0, 0);
      await receive(T, ev('start', 'a1', 's1', T), ev('manifest', 'a1', 's1', T), ev('start', 'a2', 's2', T));
      await receive(at(10, 30), ev('start', 'a2', 's3', at(10, 30)));
      clock.set(T + 24 * 3600_000);
      assert.ok(await store.get('ws1', 'a1'), 'still served at exactly 24 h');
      clock.advance(1);
      assert.equal(await store.get('ws1', 'a1'), undefined);
      assert.deepEqual((await store.top('ws1', 100)).map((a) => a.assetId), ['a2']);
      assert.equal((await store.size()).assets, 2);
      assert.equal((await store.prune()).assetsRemoved, 1);
      const after = await store.size();
      assert.deepEqual({ assets: after.assets, buckets: after.buckets, sessions: after.sessions }, { assets: 1, buckets: 3, sessions: 1 }, 'one second of detail (10:30:00), two minutes of history (10:00, 10:30)');
      clock.set(at(10, 31) + 24 * 3600_000);
      await store.prune();
      assert.deepEqual(await store.size(), { owners: 0, assets: 0, buckets: 0, sessions: 0, ownerBuckets: 0, pendingEvents: 0 });
    });

    scenario('duplicate events of one session count once, also across minutes of one window', {}, async ({ store, receive }) => {
      const s = ev('start', 'a1', 's1', at(10, 0, 5));
      await receive(at(10, 0, 6), s, s, { ...s, ts: at(10, 0, 50) });
      await receive(at(10, 2, 0), ev('start', 'a1', 's1', at(10, 2, 0)), ev('manifest', 'a1', 's1', at(10, 2, 0)), ev('manifest', 'a1', 's1', at(10, 2, 1)));
      const a1 = await store.get('ws1', 'a1');
      assert.deepEqual([a1?.stats.new, a1?.stats.manifest, a1?.ts], [1, 1, at(10, 2, 0)]);
      assert.equal((await store.summary('ws1')).stats.new, 1);
    });

    scenario('errors count distinct sessions per code; requests count every request', {}, async ({ store, receive }) => {
      const T = at(10, 1);
      await receive(
        T,
        ev('error', 'a1', 's1', T, { error_code: 103 }),
        ev('error', 'a1', 's1', T + 1, { error_code: 103 }),
        ev('error', 'a1', 's2', T + 2, { error_code: 103 }),
        ev('error', 'a1', 's2', T + 3, { error_code: 110 }),
        ev('error', 'a1', 's3', T + 4),
        ev('request', 'a1', 's1', T + 4),
        ev('request', 'a1', 's1', T + 4),
      );
      const a1 = await store.get('ws1', 'a1');
      assert.deepEqual(Object.fromEntries(a1?.stats.errors ?? []), { 103: 2, 110: 1, 999: 1 });
      assert.deepEqual([a1?.ts, a1?.stats.new, a1?.stats.requests], [T + 4, 0, 2], 'no start yet: the latest event anchors');
    });

    scenario('latency keeps min, max, sum and count per kind over the window', {}, async ({ store, receive }) => {
      await receive(
        at(10, 2),
        ev('manifest', 'a1', 's1', at(10, 0), { latency_ms: 10 }),
        ev('manifest', 'a1', 's2', at(10, 1), { latency_ms: 0.1 }),
        ev('manifest', 'a1', 's3', at(10, 2), { latency_ms: 30.2 }),
        ev('manifest', 'a1', 's4', at(10, 2)),
        ev('ad', 'a1', 's1', at(10, 1), { latency_ms: 100 }),
        ev('start', 'a1', 's1', at(10, 2)),
      );
      const stats = (await store.get('ws1', 'a1'))?.stats;
      assert.deepEqual(stats?.manifestLatency, { min: 0.1, max: 30.2, sum: 10 + 0.1 + 30.2, count: 3 });
      assert.deepEqual(stats?.adLatency, { min: 100, max: 100, sum: 100, count: 1 });
      assert.equal(stats?.manifest, 4);
    });

    scenario('top: most new sessions first, ties by most recent ts, at most `limit`', {}, async ({ store, receive }) => {
      const T = at(10, 0);
      await receive(T + 3000, ev('start', 'a', 's1', T), ev('start', 'a', 's2', T + 1), ev('start', 'b', 's3', T + 2), ev('start', 'c', 's4', T + 3));
      await receive(T + 3000, ev('request', 'd', 's5', T + 3000), ev('start', 'e2', 's6', T + 3), ev('start', 'e1', 's7', T + 3));
      const ids = async (limit = 100) => (await store.top('ws1', limit)).map((a) => `${a.assetId}:${a.stats.new}`);
      assert.deepEqual(await ids(), ['a:2', 'c:1', 'e2:1', 'e1:1', 'b:1', 'd:0']);
      assert.deepEqual(await ids(3), ['a:2', 'c:1', 'e2:1'], 'equal new and ts: the older asset first, also at the cut');
      await receive(T + 4000, ev('start', 'b', 's6', T + 4000), ev('start', 'b', 's7', T + 4000));
      await receive(at(10, 10), ev('start', 'a', 's8', at(10, 10)));
      assert.deepEqual(await ids(3), ['b:3', 'a:1', 'c:1']);
      assert.deepEqual(await store.top('nobody', 100), []);
    });

    scenario('search returns the known assets in the order asked', {}, async ({ store, receive }) => {
      await receive(at(10, 0), ev('start', 'a', 's', at(10, 0)), ev('start', 'b', 's', at(10, 0)));
      assert.deepEqual((await store.search('ws1', ['b', 'zzz', 'a', 'b'])).map((a) => a.assetId), ['b', 'a', 'b']);
      assert.deepEqual(await store.search('ws2', ['a']), []);
    });

    scenario('stats_delay_ms: a session appears in its asset after the delay, and in the owner summary of the 180 s ending `delay` ago', { delayMs: 180_000 }, async ({ clock, store, receive }) => {
      await receive(at(10, 0), ev('start', 'a1', 's1', at(10, 0)), ev('request', 'a1', 's1', at(10, 0)));
      const hidden = async () => [await store.get('ws1', 'a1'), (await store.top('ws1', 100)).length, (await store.search('ws1', ['a1'])).length, (await store.summary('ws1')).stats.new];
      assert.deepEqual(await hidden(), [undefined, 0, 0, 0]);
      assert.equal((await store.size()).pendingEvents, 2);
      clock.set(at(10, 2, 59, 999));
      assert.deepEqual(await hidden(), [undefined, 0, 0, 0]);
      clock.set(at(10, 3));
      assert.equal((await store.get('ws1', 'a1'))?.stats.new, 1);
      assert.deepEqual([(await store.top('ws1', 100)).length, (await store.search('ws1', ['a1'])).length], [1, 1]);
      const summary = await store.summary('ws1');
      assert.deepEqual([summary.ts, summary.stats.new, summary.stats.requests], [at(10, 0), 1, 1], 'the summary of the 180 s ending delay ago: it agrees with the asset');
      assert.equal((await store.size()).pendingEvents, 0);
      clock.set(at(10, 3, 1));
      assert.deepEqual([(await store.summary('ws1')).stats.new, (await store.get('ws1', 'a1'))?.stats.new], [1, 1], 't + 181 s: both views show the session');
      clock.set(at(10, 5, 59, 999));
      assert.deepEqual([(await store.summary('ws1')).ts, (await store.summary('ws1')).stats.new], [at(10, 2, 59, 999), 1], 'still inside the 180 s ending delay ago');
      clock.set(at(10, 6));
      const gone = await store.summary('ws1');
      assert.deepEqual([gone.ts, gone.stats.new, gone.stats.requests], [at(10, 3), 0, 0], '180 s after it became retrievable it leaves the summary');
      await receive(at(10, 6), ev('start', 'a2', 's2', at(10, 5)));
      assert.equal((await store.summary('ws1')).stats.new, 0, 'received but not retrievable yet');
      clock.set(at(10, 9));
      assert.deepEqual([(await store.summary('ws1')).stats.new, (await store.prune()).assetsRemoved, (await store.summary('ws1')).stats.new], [1, 0, 1], 'prune keeps what the delayed summary reads');
    });

    scenario('stats_delay_ms of 60 s: the summary shows a session for the 180 s after it became retrievable, not only until t + 180 s', { delayMs: 60_000 }, async ({ clock, store, receive }) => {
      const T = at(10, 0, 30);
      await receive(T, ev('start', 'a1', 's1', T));
      const shown = async (when: number) => {
        clock.set(when);
        return [(await store.summary('ws1')).stats.new, (await store.get('ws1', 'a1'))?.stats.new ?? 0];
      };
      assert.deepEqual(await shown(T + 59_999), [0, 0]);
      assert.deepEqual(await shown(T + 60_000), [1, 1]);
      assert.deepEqual(await shown(T + 180_000), [1, 1], 'not dropped at t + 180 s');
      assert.deepEqual(await shown(T + 239_999), [1, 1]);
      assert.deepEqual(await shown(T + 240_000), [0, 1], 'the summary window has moved past it; the asset window has not');
      assert.equal((await store.summary('ws1')).ts, T + 180_000, 'ts: the query time minus the delay');
    });

    scenario('rendered latency: mean, min and max agree (the mean is never outside [min, max])', {}, async ({ store, receive }) => {
      const T = at(10, 4);
      await receive(
        T,
        ev('manifest', 'a1', 's1', T, { latency_ms: 10.0004 }),
        ev('ad', 'a1', 's1', T, { latency_ms: 0.1 }),
        ev('ad', 'a1', 's2', T, { latency_ms: 0.1 }),
        ev('ad', 'a1', 's3', T, { latency_ms: 0.1 }),
        ev('start', 'a1', 's1', T),
      );
      for (const stats of [(await store.get('ws1', 'a1'))?.stats, (await store.summary('ws1')).stats]) {
        const latency = statsBody(stats ?? assert.fail('no statistics')).latency;
        assert.deepEqual(latency, { manifest: { mean_ms: 10, min_ms: 10, max_ms: 10 }, ad: { mean_ms: 0.1, min_ms: 0.1, max_ms: 0.1 } });
      }
    });

    scenario('refusals: one session rule, whether or not the library holds the asset (summary, history and asset alike)', {}, async ({ store, receive }) => {
      const T = at(10, 4);
      // Three refusals sharing one session (pbs), of an asset in the library and of one outside it.
      const refusal = (asset: string, session: string, ts: number, outside: boolean) => [
        ev('request', asset, session, ts, outside ? { workspace_only: true } : {}),
        ev('error', asset, session, ts, { error_code: 110, ...(outside ? { workspace_only: true } : {}) }),
      ];
      for (let i = 0; i < 3; i++) await receive(T + i * 1000, ...refusal('in-library', 'pbs-shared', T + i * 1000, false), ...refusal('outside', 'pbs-shared', T + i * 1000, true));
      let summary = await store.summary('ws1');
      assert.deepEqual([summary.stats.requests, summary.stats.errors.get(110)], [6, 2], 'each asset: three requests, one session with error 110');
      assert.deepEqual(Object.fromEntries((await store.get('ws1', 'in-library'))?.stats.errors ?? []), { 110: 1 });
      // Another session, or the same session of another asset outside the library, is another session.
      await receive(T + 4000, ...refusal('outside', 'pbs-other', T + 4000, true), ...refusal('outside-2', 'pbs-shared', T + 4000, true));
      summary = await store.summary('ws1');
      assert.deepEqual([summary.stats.requests, summary.stats.errors.get(110)], [8, 4]);
      // Workspace-only sessions of the other kinds count once too.
      await receive(T + 5000, ev('start', 'outside', 'p1', T + 5000, { workspace_only: true }), ev('start', 'outside', 'p1', T + 5000, { workspace_only: true }));
      assert.equal((await store.summary('ws1')).stats.new, 1);
      const history = (await store.history('ws1', undefined, T, T + 60_000)) ?? [];
      assert.deepEqual(history.map((p) => [p.stats.requests, Object.fromEntries(p.stats.errors), p.stats.new]), [[8, { 110: 4 }, 1]]);
      assert.equal(await store.get('ws1', 'outside'), undefined, 'still never an asset');
    });

    test('refusals outside the library: a resend after a restart still counts once', async () => {
      const clock = new FakeClock(at(10, 30));
      const under = await factory(clock, {});
      try {
        const now = clock.now();
        const batch = [ev('error', 'outside', 'pbs-shared', now, { error_code: 110, workspace_only: true })];
        await under.store.record(batch, now);
        const again = await under.restart();
        clock.set(now + 1000);
        await again.record(batch, now + 1000);
        assert.equal((await again.summary('ws1')).stats.errors.get(110), 1);
      } finally {
        await under.close();
      }
    });

    scenario('ids are opaque: separators, unicode and look-alike owners stay apart', {}, async ({ store, receive }) => {
      const T = at(10, 0);
      await receive(T, ev('start', 'b:c', 's', T, { owner: 'a' }), ev('start', 'c', 's', T, { owner: 'a:b' }), ev('start', 'ü,|é', 's,1', T));
      assert.deepEqual([(await store.get('a', 'b:c'))?.stats.new, await store.get('a', 'c'), (await store.get('a:b', 'c'))?.stats.new], [1, undefined, 1]);
      assert.equal((await store.get('ws1', 'ü,|é'))?.stats.new, 1);
    });

    scenario('top over thousands of assets equals a full sort of every asset', {}, async ({ store, receive }) => {
      const random = seededRandom(3);
      for (let round = 0; round < 4; round++) {
        const when = at(10, round * 2, 30);
        const events: PlaybackEvent[] = [];
        for (let i = 0; i < 1500; i++) {
          events.push(ev('start', `a${Math.floor(random() * 2500)}`, `s${Math.floor(random() * 4)}`, when - Math.floor(random() * 100_000)));
        }
        await receive(when, ...events);
        const all = await store.search('ws1', Array.from({ length: 2500 }, (_, i) => `a${i}`));
        const expected = all
          .sort((a, b) => b.stats.new - a.stats.new || b.ts - a.ts)
          .slice(0, 100)
          .map((a) => `${a.stats.new}:${a.ts}`);
        // Equal (new, ts) pairs keep creation order, which search does not show: compare the keys.
        assert.deepEqual((await store.top('ws1', 100)).map((a) => `${a.stats.new}:${a.ts}`), expected);
      }
    });

    statsStoreDifferentialTests(factory);
  });
}
