import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../../platform/clock.js';
import type { PlaybackEvent } from '../events.schema.js';
import { MemoryStatsStore } from './memory-stats-store.js';
import type { MemoryStatsStoreOptions } from './memory-stats-store.js';
import { playbackEvent as ev, seededRandom } from '../test-events.test-support.js';

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

// The counting rules shared with the Redis store are in the conformance suite
// (stats-store.conformance.test-support.ts beside this file), run against this store too. Here: what only
// the embedded store has (its memory layout, the merge path of its ranking, snapshots).

test('memory: detail, history and marks held are exactly what a query may still read, and prune frees the rest', async () => {
  const { clock, store, receive } = setup();
  const T = at(10, 0, 0);
  const sessions = Array.from({ length: 40 }, (_, i) => ev('start', 'a1', `s${i}`, T + i * 1000));
  await receive(T + 40_000, ...sessions, ...sessions.map((e) => ({ ...e, type: 'manifest' as const, latency_ms: 5 })));
  assert.equal((await store.get('ws1', 'a1'))?.stats.new, 40, 'forty sessions (past the scan limit: the marks are indexed)');
  await receive(T + 41_000, ...sessions.slice(0, 10));
  assert.equal((await store.get('ws1', 'a1'))?.stats.new, 40, 'duplicates found through the index');
  let size = await store.size();
  assert.deepEqual({ buckets: size.buckets, sessions: size.sessions }, { buckets: 40 + 1, sessions: 40 });
  // Ten minutes later a new start moves the window: the old seconds and marks are dead.
  await receive(at(10, 10), ev('start', 'a1', 'late', at(10, 10)));
  assert.deepEqual((await store.prune()).sessionsRemoved, 40);
  size = await store.size();
  assert.deepEqual({ buckets: size.buckets, sessions: size.sessions }, { buckets: 1 + 2, sessions: 1 }, 'one second of detail, minutes 10:00 and 10:10 of history');
  clock.set(at(10, 10) + 24 * 3600_000 + 60_000);
  await store.prune();
  assert.deepEqual(await store.size(), { owners: 0, assets: 0, buckets: 0, sessions: 0, ownerBuckets: 0, pendingEvents: 0 });
});

test('at the asset limit, a flood of events for new assets does not rescan the workspace each time', async () => {
  const { store, receive } = setup({ maxAssetsPerWorkspace: 1000 });
  const T = at(10, 0);
  await receive(T, ...Array.from({ length: 1000 }, (_, i) => ev('start', `a${i}`, 's', T)));
  const owner = store.owners.get('ws1');
  const result = await store.record(Array.from({ length: 5000 }, (_, i) => ev('request', `new${i}`, 's', T)), T);
  assert.equal(result.dropped.length, 5000);
  assert.equal(owner?.noExpiryBefore, T + 24 * 3600_000, 'one scan found the earliest expiry');
  assert.equal(store.droppedEvents, 5000);
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
