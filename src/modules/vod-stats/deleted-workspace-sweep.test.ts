import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../platform/clock.js';
import { playbackEvent as ev } from './test-events.test-support.js';
import { MemoryStatsStore } from './store/memory-stats-store.js';
import { DeletedWorkspaceSweep } from './deleted-workspace-sweep.js';

const T = Date.UTC(2026, 10, 21, 10, 0, 0);

test('the sweep erases the statistics of owners that are no workspace, on start and every period', async () => {
  const clock = new FakeClock(T);
  const store = new MemoryStatsStore({ clock });
  const workspaces = new Set(['kept', 'later']);
  const sweep = new DeletedWorkspaceSweep({ store, clock, everyMs: 60_000, existing: async (ids) => new Set(ids.filter((id) => workspaces.has(id))) });
  await store.record([ev('start', 'a1', 's1', T, { owner: 'kept' }), ev('start', 'a1', 's1', T, { owner: 'gone' }), ev('start', 'a1', 's1', T, { owner: 'later' })], T);

  await sweep.start();
  assert.deepEqual((await store.ownerIds()).sort(), ['kept', 'later']);

  workspaces.delete('later');
  clock.advance(59_999);
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual((await store.ownerIds()).sort(), ['kept', 'later'], 'not before the period');
  clock.advance(1);
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(await store.ownerIds(), ['kept']);
  await sweep.stop();
});
