import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../platform/clock.js';
import { ReplayGuard } from './replay-guard.js';

test('a value is claimed once until it expires, then again', () => {
  const clock = new FakeClock();
  const guard = new ReplayGuard({ clock, capacity: 10, maxTtlMs: 60_000 });
  const t0 = clock.now();
  assert.equal(guard.claim('pbs-1', t0 + 1000), true);
  assert.equal(guard.claim('pbs-1', t0 + 1000), false);
  clock.advance(1001);
  assert.equal(guard.claim('pbs-1', clock.now() + 1000), true, 'expired claims are forgotten');
});

test('no claim outlives maxTtlMs, whatever expiry the URL asks for', () => {
  const clock = new FakeClock();
  const guard = new ReplayGuard({ clock, capacity: 10, maxTtlMs: 5000 });
  guard.claim('sig', clock.now() + 10 * 86_400_000);
  clock.advance(5000);
  assert.equal(guard.claim('sig', clock.now() + 1000), true);
});

test('memory is bounded: the oldest claim is forgotten first and counted', () => {
  const clock = new FakeClock();
  const guard = new ReplayGuard({ clock, capacity: 3, maxTtlMs: 60_000 });
  for (const k of ['a', 'b', 'c', 'd']) guard.claim(k, clock.now() + 30_000);
  assert.equal(guard.size, 3);
  assert.equal(guard.evicted, 1);
  assert.equal(guard.claim('a', clock.now() + 30_000), true, 'the evicted one is claimable again');
  assert.equal(guard.claim('d', clock.now() + 30_000), false);
});

test('expired entries are swept while claiming, and a release gives a claim back', () => {
  const clock = new FakeClock();
  const guard = new ReplayGuard({ clock, capacity: 100, maxTtlMs: 60_000 });
  for (let i = 0; i < 5; i++) guard.claim(`old-${i}`, clock.now() + 10);
  clock.advance(11);
  guard.claim('new', clock.now() + 10);
  assert.equal(guard.size, 1);
  guard.release('new');
  assert.equal(guard.claim('new', clock.now() + 10), true);
});
