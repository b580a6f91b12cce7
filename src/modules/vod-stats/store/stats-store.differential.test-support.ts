import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../../platform/clock.js';
import type { PlaybackEvent, PlaybackEventType } from '../events.schema.js';
import { MemoryStatsStore } from './memory-stats-store.js';
import type { StatsStore } from './stats-store.js';
import { playbackEvent, seededRandom } from '../test-events.test-support.js';
import type { StoreFactory } from './stats-store.conformance.test-support.js';

const OWNERS = ['ws1', 'ws2'];
const ASSETS = ['a0', 'a1', 'a2', 'a3', 'a4', 'a5'];
const TYPES: PlaybackEventType[] = ['request', 'manifest', 'ad', 'start', 'start', 'error', 'rebuffer'];

/** Everything a client can see, for every owner and asset. */
const observe = async (store: StatsStore): Promise<unknown[]> => {
  const seen: unknown[] = [];
  for (const owner of OWNERS) {
    const now = Date.UTC(2030, 0, 1);
    seen.push(await store.top(owner, 100), await store.top(owner, 2), await store.summary(owner), await store.search(owner, ASSETS));
    seen.push(await store.history(owner, undefined, 0, now));
    for (const asset of ASSETS) seen.push(await store.get(owner, asset), await store.history(owner, asset, 0, now));
  }
  return seen;
};

/**
 * Random traffic (late events, duplicates, expiry after long pauses, prune at random moments)
 * recorded into the store under test and into the embedded store: after every batch both must
 * show exactly the same thing, and after every prune hold exactly the same amount of state.
 */
export function statsStoreDifferentialTests(factory: StoreFactory, seeds: readonly number[] = [1000], steps = 250): void {
  for (const seed of seeds) for (const delayMs of [0, 90_000]) {
    test(`random traffic: every answer equals the embedded store's (seed ${seed}, delay ${delayMs} ms)`, async () => {
      const random = seededRandom(seed + delayMs);
      const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
      const clock = new FakeClock(Date.UTC(2026, 10, 21, 10, 0, 0));
      const reference = new MemoryStatsStore({ clock, delayMs });
      const { store, close } = await factory(clock, { delayMs });
      try {
        for (let step = 0; step < steps; step++) {
          clock.advance(random() < 0.04 ? Math.floor(random() * 30 * 3600_000) : Math.floor(random() * 40_000));
          const now = clock.now();
          const events: PlaybackEvent[] = [];
          const count = 1 + Math.floor(random() * 10);
          for (let i = 0; i < count; i++) {
            const late = random() < 0.15 ? Math.floor(random() * 3 * 3600_000) : Math.floor(random() * 150_000);
            // Whole seconds half of the time, so assets tie on ts and creation order decides.
            const ts = Math.max(0, now - late);
            const type = pick(TYPES);
            events.push(
              playbackEvent(type, pick(ASSETS), `s${Math.floor(random() * 12)}`, random() < 0.5 ? ts - (ts % 1000) : ts, {
                owner: pick(OWNERS),
                latency_ms: (type === 'manifest' || type === 'ad') && random() < 0.8 ? Math.floor(random() * 5000) / 7 : undefined,
                error_code: type === 'error' ? pick([103, 104, 999]) : undefined,
                startup_ms: type === 'start' && random() < 0.5 ? Math.floor(random() * 9000) / 3 : undefined,
                workspace_only: type !== 'rebuffer' && random() < 0.08 ? true : undefined,
              }),
            );
          }
          await reference.record(events, now);
          await store.record(events, now);
          if (random() < 0.2) {
            await reference.prune();
            await store.prune();
            assert.deepEqual(await store.size(), await reference.size(), `step ${step}: state held after prune`);
          }
          if (random() < 0.5) clock.advance(Math.floor(random() * 100_000));
          assert.deepEqual(await observe(store), await observe(reference), `step ${step}: answers differ`);
        }
      } finally {
        await close();
      }
    });
  }
}
