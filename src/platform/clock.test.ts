import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from './clock.js';

test('FakeClock fires due timers in order and only when advanced', () => {
  const clock = new FakeClock(1000);
  const fired: string[] = [];
  clock.setTimer(() => fired.push('b'), 200);
  clock.setTimer(() => fired.push('a'), 100);
  const cancel = clock.setTimer(() => fired.push('c'), 150);
  cancel();
  clock.advance(99);
  assert.deepEqual(fired, []);
  clock.advance(101);
  assert.deepEqual(fired, ['a', 'b']);
  assert.equal(clock.now(), 1200);
});
