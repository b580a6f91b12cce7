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

test('followRealTime: the fake time never falls behind the real time passed (a CLI signing on the system clock stays in tolerance); timers fire only in advance', (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: 1_000_000 });
  const start = Date.UTC(2026, 10, 21, 10, 0, 0);
  const clock = new FakeClock(start, { followRealTime: true });
  let fired = 0;
  clock.setTimer(() => fired++, 60_000);
  t.mock.timers.tick(341_000); // a file that ran 341 s on a loaded machine
  assert.equal(clock.now(), start + 341_000);
  assert.equal(fired, 0, 'real time passing fires no timer');
  clock.advance(0);
  assert.equal(fired, 1, 'the next advance fires what fell due');
  clock.advance(10_000);
  assert.equal(clock.now(), start + 351_000, 'advancing moves it ahead of real time');
  t.mock.timers.tick(5_000);
  assert.equal(clock.now(), start + 351_000, 'and real time does not pull it back or double it');
  const plain = new FakeClock(start);
  t.mock.timers.tick(400_000);
  assert.equal(plain.now(), start, 'without the option it stays put');
});
