import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FakeClock } from '../../platform/clock.js';
import { EventColumns, TYPE } from './event-columns.js';
import { parseEventBatch, parseEventColumns } from './ingest/event-batch.js';
import type { EventBatchContext } from './ingest/event-fields.js';
import { MemoryStatsStore } from './store/memory-stats-store.js';
import { sessionHash } from './session-hash.js';
import { RETENTION_MS } from './stats-window.js';
import { playbackEvent } from './test-events.test-support.js';

const NOW = Date.UTC(2026, 10, 26, 10, 0, 0);
/** Members left undefined dropped (the test events leave some out, the columns give all back). */
const defined = (value: unknown): unknown => JSON.parse(JSON.stringify(value));
const ctx: EventBatchContext = { now: NOW, owners: new Set(['ws1', 'ws2']), foreignOwnerCode: 'owner_not_allowed' };

/** Lines shaped like events, most of them valid, every optional member present or not. */
const line = fc
  .record(
    {
      type: fc.constantFrom('request', 'manifest', 'ad', 'start', 'error', 'rebuffer', 'pause'),
      owner: fc.constantFrom('ws1', 'ws2', 'ws3'),
      asset_id: fc.constantFrom('a1', 'a2', 'a3', ''),
      session_id: fc.string({ minLength: 1, maxLength: 6 }),
      ts: fc.integer({ min: NOW - RETENTION_MS - 10, max: NOW + 10 }),
      latency_ms: fc.oneof(fc.double({ min: 0, max: 5000, noNaN: true }), fc.constant(null)),
      startup_ms: fc.double({ min: 0, max: 5000, noNaN: true }),
      error_code: fc.constantFrom(103, 110, 555, null),
      http_status: fc.integer({ min: 100, max: 599 }),
      url: fc.string({ maxLength: 10 }),
      msg: fc.string({ maxLength: 10 }),
      workspace_only: fc.boolean(),
    },
    { requiredKeys: ['type', 'owner', 'asset_id', 'session_id'] },
  )
  .map((e) => JSON.stringify(e));
const body = fc.array(fc.oneof({ weight: 9, arbitrary: line }, fc.constant('not json'), fc.constant('')), { maxLength: 40 }).map((lines) => lines.join('\n'));

test('a batch parsed into columns holds exactly the events, indexes and rejections of the object parse (property)', async () => {
  await fc.assert(
    fc.asyncProperty(body, async (text) => {
      const objects = await parseEventBatch(text, 'ndjson', ctx);
      const columns = await parseEventColumns(text, 'ndjson', ctx, { keepSessionIds: true });
      assert.deepEqual(columns.columns.toEvents(), objects.events);
      assert.deepEqual([...columns.columns.index.subarray(0, columns.columns.length)], objects.indexes);
      assert.deepEqual(columns.rejected, objects.rejected);
      assert.equal(columns.rejectedCount, objects.rejectedCount);
      for (let i = 0; i < columns.columns.length; i++) {
        assert.equal(columns.columns.session[i], sessionHash(objects.events[i]?.session_id as string), 'the session is its dedupe hash');
      }
      assert.deepEqual(columns.columns.owners, [...new Set(objects.events.map((e) => e.owner))], 'distinct owners in order of appearance');
    }),
    { seed: 20261126, numRuns: 200 },
  );
});

test('columns grow past their first capacity and keep every row', () => {
  const events = Array.from({ length: 1000 }, (_, n) => playbackEvent(n % 2 === 0 ? 'start' : 'manifest', `a${n % 7}`, `s${n}`, NOW - n, { latency_ms: n % 2 === 0 ? undefined : n, startup_ms: n % 2 === 0 ? n : undefined }));
  const columns = new EventColumns({ capacity: 3, keepSessionIds: true });
  events.forEach((e, i) => columns.push(e, i * 2));
  assert.equal(columns.length, 1000);
  assert.deepEqual(defined(columns.toEvents()), defined(events));
  assert.equal(columns.index[999], 1998);
  assert.equal(columns.type[0], TYPE.start);
  assert.throws(() => EventColumns.fromEvents(events).event(0), /session ids were not kept/);
});

test('without(owner) keeps the other workspaces\' rows of a range, in order, with their error details', () => {
  const events = [
    playbackEvent('start', 'a1', 's1', NOW),
    playbackEvent('error', 'a1', 's2', NOW, { owner: 'ws2', error_code: 110, msg: 'boom', http_status: 403 }),
    playbackEvent('request', 'a2', 's3', NOW),
    playbackEvent('error', 'a3', 's4', NOW, { owner: 'ws2', error_code: 103 }),
  ];
  const columns = new EventColumns({ keepSessionIds: true });
  events.forEach((e, i) => columns.push(e, i));
  const kept = columns.without('ws1', 1, 4);
  assert.deepEqual(defined(kept.toEvents()), defined([events[1], events[3]]));
  assert.deepEqual(kept.owners, ['ws2']);
  assert.deepEqual([...kept.index.subarray(0, kept.length)], [1, 3]);
});

test('counting columns a range at a time gives the state and drops of counting the events whole', async () => {
  const clock = new FakeClock(NOW);
  const events = Array.from({ length: 50 }, (_, n) => playbackEvent(n % 3 === 0 ? 'start' : n % 3 === 1 ? 'manifest' : 'error', `a${n % 9}`, `s${n % 11}`, NOW - n * 1000, { latency_ms: n % 3 === 1 ? n : undefined, error_code: n % 3 === 2 ? 110 : undefined }));
  const whole = new MemoryStatsStore({ clock, maxAssetsPerWorkspace: 5 });
  const sliced = new MemoryStatsStore({ clock, maxAssetsPerWorkspace: 5 });
  const expected = whole.recordSync(events, NOW).dropped;
  const columns = EventColumns.fromEvents(events);
  const dropped = [...sliced.recordColumns(columns, NOW, 0, 17).dropped, ...sliced.recordColumns(columns, NOW, 17, 50).dropped];
  assert.deepEqual(dropped, expected);
  assert.ok(expected.length > 0, 'the asset limit dropped some (positions in the whole batch)');
  assert.deepEqual([...sliced.snapshotLines()], [...whole.snapshotLines()]);
});

test('a snapshot written before columns (pending events as objects) is still read', async () => {
  const clock = new FakeClock(NOW);
  const store = new MemoryStatsStore({ clock, delayMs: 60_000 });
  const pending = [playbackEvent('start', 'a1', 's1', NOW), playbackEvent('manifest', 'a1', 's1', NOW, { latency_ms: 7 })];
  await store.record(pending, NOW);
  const lines = [...store.snapshotLines()];
  const old = lines.map((l) => (l.startsWith('["p"') ? JSON.stringify(['p', NOW, pending]) : l));
  const copy = new MemoryStatsStore({ clock, delayMs: 60_000 });
  copy.restoreSnapshot(old);
  assert.deepEqual([...copy.snapshotLines()], lines);
  clock.advance(60_000);
  assert.deepEqual(await copy.get('ws1', 'a1'), await store.get('ws1', 'a1'));
  assert.equal((await copy.get('ws1', 'a1'))?.stats.new, 1);
});
