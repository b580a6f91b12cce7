import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../platform/clock.js';
import { clockedWindowStore } from './refusal-limit.js';

const count = (store: { incr: (key: string, cb: (e: Error | null, r?: { current: number; ttl: number }) => void, window: number, max: number) => void }, key: string) => {
  let result: { current: number; ttl: number } | undefined;
  store.incr(key, (_e, r) => { result = r; }, 60_000, 5);
  return result;
};

test('the window is fixed from the first count and starts again once it has passed, on the injected clock', () => {
  const clock = new FakeClock();
  const Store = clockedWindowStore(clock, 100);
  const store = new Store({});
  assert.deepEqual(count(store, 'ip'), { current: 1, ttl: 60_000 });
  clock.advance(59_999);
  assert.deepEqual(count(store, 'ip'), { current: 2, ttl: 1 });
  clock.advance(1);
  assert.deepEqual(count(store, 'ip'), { current: 1, ttl: 60_000 });
});

test('bounded: past its capacity the least recently counted address is dropped', () => {
  const clock = new FakeClock();
  const Store = clockedWindowStore(clock, 2);
  const store = new Store({});
  count(store, 'a');
  count(store, 'a');
  count(store, 'b');
  count(store, 'a');
  count(store, 'c');
  assert.equal(count(store, 'a')?.current, 4, 'a was counted recently: kept');
  assert.equal(count(store, 'b')?.current, 1, 'b was the least recent: dropped, counted afresh');
});
