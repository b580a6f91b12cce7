import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../../platform/clock.js';
import type { PlaybackEvent, PlaybackEventType } from '../events.schema.js';
import { MemoryStatsStore } from './memory-stats-store.js';
import { playbackEvent, seededRandom } from '../test-events.test-support.js';

const OWNERS = ['ws1', 'ws2'];
const ASSETS = ['a0', 'a1', 'a2', 'a3', 'a4', 'a5'];
const TYPES: PlaybackEventType[] = ['request', 'manifest', 'ad', 'start', 'start', 'error'];

/** Everything a client can see, for every owner and asset. */
const observe = async (store: MemoryStatsStore) => {
  const seen: unknown[] = [];
  for (const owner of OWNERS) {
    seen.push(await store.top(owner, 100), await store.summary(owner));
    for (const asset of ASSETS) seen.push(await store.get(owner, asset));
  }
  return seen;
};

const copyOf = (store: MemoryStatsStore, clock: FakeClock, delayMs: number) => {
  const copy = new MemoryStatsStore({ clock, delayMs });
  copy.restoreSnapshot([...store.snapshotLines()].join('\n').split('\n'));
  return copy;
};

for (const delayMs of [0, 90_000, 600_000]) {
  test(`what queries show depends only on the batches recorded, not on prune or snapshots (delay ${delayMs})`, async () => {
    const random = seededRandom(42 + delayMs);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
    const clock = new FakeClock(Date.UTC(2026, 10, 21, 10, 0, 0));
    const pruned = new MemoryStatsStore({ clock, delayMs });
    const untouched = new MemoryStatsStore({ clock, delayMs });
    let restored = new MemoryStatsStore({ clock, delayMs });
    for (let step = 0; step < 400; step++) {
      // Mostly seconds apart, sometimes a long pause (so windows move and assets expire).
      clock.advance(random() < 0.05 ? Math.floor(random() * 30 * 3600_000) : Math.floor(random() * 40_000));
      const now = clock.now();
      const events: PlaybackEvent[] = [];
      const count = 1 + Math.floor(random() * 8);
      for (let i = 0; i < count; i++) {
        const late = random() < 0.15 ? Math.floor(random() * 3 * 3600_000) : Math.floor(random() * 150_000);
        const type = pick(TYPES);
        events.push(
          playbackEvent(type, pick(ASSETS), `s${Math.floor(random() * 12)}`, Math.max(0, now - late), {
            owner: pick(OWNERS),
            latency_ms: type === 'manifest' || type === 'ad' ? Math.floor(random() * 500) / 4 : undefined,
            error_code: type === 'error' ? pick([103, 104, 999]) : undefined,
          }),
        );
      }
      await pruned.record(events, now);
      await untouched.record(events, now);
      await restored.record(events, now);
      if (random() < 0.3) await pruned.prune();
      if (random() < 0.1) restored = copyOf(restored, clock, delayMs);
      if (random() < 0.5) clock.advance(Math.floor(random() * 100_000));
      const expected = await observe(untouched);
      assert.deepEqual(await observe(pruned), expected, `step ${step}: prune changed what is visible`);
      assert.deepEqual(await observe(restored), expected, `step ${step}: a snapshot changed what is visible`);
    }
    await pruned.prune();
    const size = await pruned.size();
    const unprunedSize = await untouched.size();
    assert.ok(size.buckets < unprunedSize.buckets, 'prune frees buckets');
  });
}
