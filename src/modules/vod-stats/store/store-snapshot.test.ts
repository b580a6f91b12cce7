import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FakeClock } from '../../../platform/clock.js';
import type { PlaybackEvent } from '../events.schema.js';
import { MemoryStatsStore } from './memory-stats-store.js';
import { playbackEvent } from '../test-events.test-support.js';

const T0 = Date.UTC(2026, 10, 21, 10, 0, 0);
const OWNERS = ['ws1', 'ws2'];
const ASSETS = ['a0', 'a1', 'a2'];

const eventArb = fc.record({
  type: fc.constantFrom('request', 'manifest', 'ad', 'start', 'error'),
  owner: fc.constantFrom(...OWNERS),
  asset: fc.constantFrom(...ASSETS),
  session: fc.integer({ min: 0, max: 15 }),
  age: fc.oneof(fc.integer({ min: 0, max: 200_000 }), fc.integer({ min: 0, max: 23 * 3600_000 })),
  latency: fc.option(fc.double({ min: 0, max: 3_600_000, noNaN: true }), { nil: undefined }),
  code: fc.constantFrom(103, 104, 110, 999),
});
const batchArb = fc.record({ advance: fc.oneof(fc.integer({ min: 0, max: 60_000 }), fc.integer({ min: 0, max: 30 * 3600_000 })), events: fc.array(eventArb, { maxLength: 12 }) });

const observe = async (store: MemoryStatsStore): Promise<unknown[]> => {
  const seen: unknown[] = [];
  for (const owner of OWNERS) {
    seen.push(await store.top(owner, 100), await store.summary(owner), await store.size());
    for (const asset of ASSETS) seen.push(await store.get(owner, asset));
  }
  return seen;
};

test('snapshot round trip (property): any store state is written and read back exactly', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(batchArb, { minLength: 1, maxLength: 25 }), fc.constantFrom(0, 90_000), async (batches, delayMs) => {
      const clock = new FakeClock(T0);
      const store = new MemoryStatsStore({ clock, delayMs });
      for (const batch of batches) {
        clock.advance(batch.advance);
        const now = clock.now();
        const events: PlaybackEvent[] = batch.events.map((e) =>
          playbackEvent(e.type, e.asset, `s${e.session}`, Math.max(0, now - e.age), {
            owner: e.owner,
            latency_ms: e.type === 'manifest' || e.type === 'ad' ? e.latency : undefined,
            error_code: e.type === 'error' ? e.code : undefined,
          }),
        );
        await store.record(events, now);
      }
      const lines = [...store.snapshotLines()];
      const copy = new MemoryStatsStore({ clock, delayMs });
      copy.restoreSnapshot(lines.join('\n').split('\n'));
      assert.deepEqual([...copy.snapshotLines()], lines, 'the same lines again');
      assert.deepEqual(await observe(copy), await observe(store), 'the same answers');
      clock.advance(120_000);
      assert.deepEqual(await observe(copy), await observe(store), 'and the same later (delayed batches released alike)');
    }),
    { seed: 20261122, numRuns: 150 },
  );
});

test('a damaged snapshot is refused, never half loaded', () => {
  const clock = new FakeClock(T0);
  const store = new MemoryStatsStore({ clock });
  store.recordSync([playbackEvent('manifest', 'a1', 's1', T0, { latency_ms: 12.5 }), playbackEvent('start', 'a1', 's1', T0)], T0);
  const lines = [...store.snapshotLines()];
  const load = (text: string[]) => new MemoryStatsStore({ clock }).restoreSnapshot(text);
  assert.doesNotThrow(() => load(lines));
  const broken = (edit: (line: string) => string, index: number) => lines.map((l, i) => (i === index ? edit(l) : l));
  const asset = lines.findIndex((l) => l.startsWith('["a"'));
  assert.throws(() => load(lines.slice(0, -1)), /truncated/);
  assert.throws(() => load(broken((l) => l.replace('12.5', 'null'), asset)), /non-finite/);
  assert.throws(() => load(broken((l) => l.replace('12.5', '1e999'), asset)), /non-finite/);
  assert.throws(() => load(broken((l) => l.slice(0, -3), asset)), /not JSON/);
  assert.throws(() => load(broken(() => '["end",1,2]', lines.length - 1)), /end line/);
  assert.throws(() => load(broken((l) => l.replace('2', '1'), 0)), /version/);
});
