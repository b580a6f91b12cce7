import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../../platform/clock.js';
import type { PlaybackEvent } from '../events.schema.js';
import { MemoryStatsStore } from './memory-stats-store.js';
import type { MemoryStatsStoreOptions } from './memory-stats-store.js';
import { playbackEvent as ev, seededRandom } from '../test-events.js';

const at = (h: number, m: number, s = 0, ms = 0) => Date.UTC(2026, 10, 21, h, m, s, ms);

const setup = (options: Partial<MemoryStatsStoreOptions> = {}) => {
  const clock = new FakeClock(at(10, 0));
  const store = new MemoryStatsStore({ clock, ...options });
  /** Receives events now (advancing the clock to `when` first). */
  const receive = async (when: number, ...events: PlaybackEvent[]) => {
    clock.set(when);
    await store.record(events, when);
  };
  return { clock, store, receive };
};

test('spec timeline: a session started at T counts in its asset window and ts is that start', async () => {
  const { store, receive } = setup();
  const T = at(10, 4, 5, 123);
  await receive(T, ev('request', 'a1', 's1', T - 2000), ev('manifest', 'a1', 's1', T - 1000, { latency_ms: 40 }), ev('start', 'a1', 's1', T));
  const a1 = await store.get('ws1', 'a1');
  assert.ok(a1);
  assert.equal(a1.ts, T);
  assert.deepEqual(
    { requests: a1.stats.requests, manifest: a1.stats.manifest, ad: a1.stats.ad, new: a1.stats.new },
    { requests: 1, manifest: 1, ad: 0, new: 1 },
  );
  assert.deepEqual(a1.stats.manifestLatency, { min: 40, max: 40, sum: 40, count: 1 });
  assert.equal(a1.stats.adLatency.count, 0);
  assert.equal(await store.get('ws1', 'unknown'), undefined);
  assert.equal(await store.get('ws2', 'a1'), undefined, 'assets are per workspace');
});

test('spec timeline: sessions more than 3 minutes before the most recent start are excluded', async () => {
  const { store, receive } = setup();
  await receive(at(10, 0, 30), ev('start', 'a1', 'old', at(10, 0, 30)), ev('request', 'a1', 'old', at(10, 0, 30)));
  await receive(at(10, 1, 0), ev('start', 'a1', 'edge', at(10, 1, 0)));
  assert.equal((await store.get('ws1', 'a1'))?.stats.new, 2);
  await receive(at(10, 3, 30), ev('start', 'a1', 'latest', at(10, 3, 30)));
  const a1 = await store.get('ws1', 'a1');
  // Window = minute buckets 10:01, 10:02, 10:03: "old" (10:00:30) is out, "edge" (10:01:00) is in.
  assert.equal(a1?.stats.new, 2);
  assert.equal(a1?.stats.requests, 0);
  assert.equal(a1?.ts, at(10, 3, 30));
});

test('spec timeline: the summary covers the 3 minutes ending with the query minute', async () => {
  const { clock, store, receive } = setup();
  await receive(at(10, 0, 10), ev('start', 'a1', 's1', at(10, 0, 10)), ev('error', 'a1', 's1', at(10, 0, 10), { error_code: 104 }));
  await receive(at(10, 2, 10), ev('start', 'a2', 's2', at(10, 2, 10)), ev('ad', 'a2', 's2', at(10, 2, 11), { latency_ms: 7 }));
  let summary = await store.summary('ws1');
  assert.equal(summary.ts, at(10, 2, 10));
  assert.equal(summary.stats.new, 2);
  assert.deepEqual([...summary.stats.errors], [[104, 1]]);
  clock.set(at(10, 3, 0));
  summary = await store.summary('ws1');
  assert.equal(summary.ts, at(10, 3, 0));
  assert.equal(summary.stats.new, 1, 'the 10:00 start left the summary window');
  assert.equal(summary.stats.errors.size, 0);
  assert.deepEqual(summary.stats.adLatency, { min: 7, max: 7, sum: 7, count: 1 });
  clock.set(at(10, 5, 0));
  assert.equal((await store.summary('ws1')).stats.new, 0);
  // The per-asset window does not move with time: a2 still shows its last start.
  assert.equal((await store.get('ws1', 'a2'))?.stats.new, 1);
  assert.equal((await store.summary('nobody')).stats.new, 0);
});

test('spec timeline: an asset disappears 24 h after its last start and its memory is freed', async () => {
  const { clock, store, receive } = setup();
  const T = at(10, 0, 0);
  await receive(T, ev('start', 'a1', 's1', T), ev('manifest', 'a1', 's1', T), ev('start', 'a2', 's2', T));
  await receive(at(10, 30), ev('start', 'a2', 's3', at(10, 30)));
  clock.set(T + 24 * 3600_000);
  assert.ok(await store.get('ws1', 'a1'), 'still served at exactly 24 h');
  clock.advance(1);
  assert.equal(await store.get('ws1', 'a1'), undefined);
  assert.deepEqual((await store.top('ws1', 100)).map((a) => a.assetId), ['a2']);
  const before = await store.size();
  assert.equal(before.assets, 2);
  const pruned = await store.prune();
  assert.equal(pruned.assetsRemoved, 1);
  const after = await store.size();
  assert.deepEqual(
    { assets: after.assets, buckets: after.buckets, sessions: after.sessions },
    { assets: 1, buckets: 1, sessions: 1 },
  );
  clock.set(at(10, 30) + 24 * 3600_000 + 1);
  await store.prune();
  assert.deepEqual(await store.size(), { owners: 0, assets: 0, buckets: 0, sessions: 0, ownerBuckets: 0, pendingEvents: 0 });
});

test('duplicate start events of one session count once, also across minutes of one window', async () => {
  const { store, receive } = setup();
  const s = ev('start', 'a1', 's1', at(10, 0, 5));
  await receive(at(10, 0, 6), s, s, { ...s, ts: at(10, 0, 50) });
  await receive(at(10, 2, 0), ev('start', 'a1', 's1', at(10, 2, 0)), ev('manifest', 'a1', 's1', at(10, 2, 0)), ev('manifest', 'a1', 's1', at(10, 2, 1)));
  const a1 = await store.get('ws1', 'a1');
  assert.equal(a1?.stats.new, 1);
  assert.equal(a1?.stats.manifest, 1);
  assert.equal(a1?.ts, at(10, 2, 0));
  assert.equal((await store.summary('ws1')).stats.new, 1);
});

test('two sessions with the same error code count two; one session repeating it counts one', async () => {
  const { store, receive } = setup();
  const T = at(10, 1);
  await receive(
    T,
    ev('error', 'a1', 's1', T, { error_code: 103 }),
    ev('error', 'a1', 's1', T + 1, { error_code: 103 }),
    ev('error', 'a1', 's2', T + 2, { error_code: 103 }),
    ev('error', 'a1', 's2', T + 3, { error_code: 110 }),
    ev('error', 'a1', 's3', T + 4),
  );
  const a1 = await store.get('ws1', 'a1');
  assert.deepEqual(Object.fromEntries(a1?.stats.errors ?? []), { 103: 2, 110: 1, 999: 1 });
  assert.equal(a1?.ts, T + 4, 'no start yet: the most recent event anchors the window');
  assert.equal(a1?.stats.new, 0);
});

test('requests count every request event, sessions do not dedupe them', async () => {
  const { store, receive } = setup();
  await receive(at(10, 0), ev('request', 'a1', 's1', at(10, 0)), ev('request', 'a1', 's1', at(10, 0)), ev('start', 'a1', 's1', at(10, 0)));
  assert.equal((await store.get('ws1', 'a1'))?.stats.requests, 2);
});

test('latency keeps min, max, sum and count per kind over the window', async () => {
  const { store, receive } = setup();
  const T = at(10, 2);
  await receive(
    T,
    ev('manifest', 'a1', 's1', at(10, 0), { latency_ms: 10 }),
    ev('manifest', 'a1', 's2', at(10, 1), { latency_ms: 0.5 }),
    ev('manifest', 'a1', 's3', at(10, 2), { latency_ms: 30.25 }),
    ev('manifest', 'a1', 's4', at(10, 2)),
    ev('ad', 'a1', 's1', at(10, 1), { latency_ms: 100 }),
    ev('start', 'a1', 's1', at(10, 2)),
  );
  const stats = (await store.get('ws1', 'a1'))?.stats;
  assert.deepEqual(stats?.manifestLatency, { min: 0.5, max: 30.25, sum: 40.75, count: 3 });
  assert.deepEqual(stats?.adLatency, { min: 100, max: 100, sum: 100, count: 1 });
  assert.equal(stats?.manifest, 4);
});

test('top: most new sessions first, ties by most recent ts, at most `limit`, kept up to date', async () => {
  const { store, receive } = setup();
  const T = at(10, 0);
  await receive(T + 3000, ev('start', 'a', 's1', T), ev('start', 'a', 's2', T + 1), ev('start', 'b', 's3', T + 2), ev('start', 'c', 's4', T + 3));
  await receive(T + 3000, ev('request', 'd', 's5', T + 3000));
  const ids = async (limit = 100) => (await store.top('ws1', limit)).map((a) => `${a.assetId}:${a.stats.new}`);
  assert.deepEqual(await ids(), ['a:2', 'c:1', 'b:1', 'd:0']);
  assert.deepEqual(await ids(2), ['a:2', 'c:1']);
  // b gains two sessions; later a's window moves on and holds a single new session.
  await receive(T + 4000, ev('start', 'b', 's6', T + 4000), ev('start', 'b', 's7', T + 4000));
  assert.deepEqual(await ids(), ['b:3', 'a:2', 'c:1', 'd:0']);
  await receive(at(10, 10), ev('start', 'a', 's8', at(10, 10)));
  assert.deepEqual(await ids(), ['b:3', 'a:1', 'c:1', 'd:0']);
  assert.deepEqual(await store.top('nobody', 100), []);
});

test('search returns the known assets in the order asked and leaves unknown ones out', async () => {
  const { store, receive } = setup();
  await receive(at(10, 0), ev('start', 'a', 's', at(10, 0)), ev('start', 'b', 's', at(10, 0)));
  assert.deepEqual((await store.search('ws1', ['b', 'zzz', 'a', 'b'])).map((a) => a.assetId), ['b', 'a', 'b']);
  assert.deepEqual(await store.search('ws2', ['a']), []);
});

test('stats_delay_ms: events stay invisible until the delay has passed since receipt', async () => {
  const { clock, store, receive } = setup({ delayMs: 180_000 });
  await receive(at(10, 0), ev('start', 'a1', 's1', at(10, 0)));
  assert.equal(await store.get('ws1', 'a1'), undefined);
  assert.equal((await store.size()).pendingEvents, 1);
  clock.set(at(10, 2, 59, 999));
  assert.equal(await store.get('ws1', 'a1'), undefined);
  clock.set(at(10, 3));
  assert.equal((await store.get('ws1', 'a1'))?.stats.new, 1);
  assert.equal((await store.size()).pendingEvents, 0);
});

test('late events: within 5 minutes they anchor windows, later ones only fill the current window', async () => {
  const { store, receive } = setup();
  await receive(at(10, 10), ev('start', 'a1', 's1', at(10, 10)));
  // Arrives 4 minutes late but is the most recent start: it anchors nothing newer, it joins the window.
  await receive(at(10, 13), ev('start', 'a1', 's2', at(10, 9)));
  assert.equal((await store.get('ws1', 'a1'))?.stats.new, 2);
  // 20 minutes late, after the anchor's window: cannot anchor, cannot be shown.
  await receive(at(10, 31), ev('start', 'a1', 's3', at(10, 11)), ev('start', 'new-asset', 's4', at(10, 11)));
  const a1 = await store.get('ws1', 'a1');
  assert.equal(a1?.ts, at(10, 10));
  assert.equal(a1?.stats.new, 2);
  assert.equal(await store.get('ws1', 'new-asset'), undefined);
  // 20 minutes late but inside the current window: counted.
  await receive(at(10, 31), ev('manifest', 'a1', 's1', at(10, 10)));
  assert.equal((await store.get('ws1', 'a1'))?.stats.manifest, 1);
});

test('top over thousands of assets equals a full sort of every asset (incremental ranking is exact)', async () => {
  const { store, receive } = setup();
  const random = seededRandom(3);
  const created = new Map<string, number>();
  for (let round = 0; round < 6; round++) {
    const when = at(10, round * 2, 30);
    const events: PlaybackEvent[] = [];
    for (let i = 0; i < 1500; i++) {
      const asset = `a${Math.floor(random() * 2500)}`;
      if (!created.has(asset)) created.set(asset, created.size);
      events.push(ev('start', asset, `s${Math.floor(random() * 4)}`, when - Math.floor(random() * 100_000)));
    }
    await receive(when, ...events);
    // A second batch in the same instant: its changes wait in the backlog, which a read merges in.
    const more: PlaybackEvent[] = [];
    for (let i = 0; i < 1500; i++) {
      const asset = `a${Math.floor(random() * 2500)}`;
      if (!created.has(asset)) created.set(asset, created.size);
      more.push(ev('start', asset, `t${Math.floor(random() * 3)}`, when - Math.floor(random() * 100_000)));
    }
    await store.record(more, when);
    assert.ok((store.owners.get('ws1')?.dirty.length ?? 0) > 512, 'the read below takes the merge path');
    const all = await store.search('ws1', Array.from({ length: 2500 }, (_, i) => `a${i}`));
    const expected = all
      .sort((a, b) => b.stats.new - a.stats.new || b.ts - a.ts || (created.get(a.assetId) ?? 0) - (created.get(b.assetId) ?? 0))
      .slice(0, 100)
      .map((a) => `${a.assetId}:${a.stats.new}:${a.ts}`);
    assert.deepEqual((await store.top('ws1', 100)).map((a) => `${a.assetId}:${a.stats.new}:${a.ts}`), expected);
  }
});
