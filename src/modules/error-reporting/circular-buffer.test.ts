import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CircularBuffer } from './circular-buffer.js';

test('push appends until full, then refuses; shift takes the oldest first', () => {
  const buffer = new CircularBuffer<number>(3);
  assert.deepEqual([buffer.push(1), buffer.push(2), buffer.push(3), buffer.push(4)], [true, true, true, false]);
  assert.equal(buffer.full, true);
  assert.deepEqual(buffer.toArray(), [1, 2, 3]);
  assert.deepEqual([buffer.shift(), buffer.shift()], [1, 2]);
  assert.deepEqual([buffer.length, buffer.full], [1, false]);
});

test('pushEvicting keeps the newest items: the oldest is overwritten when full', () => {
  const buffer = new CircularBuffer<number>(3);
  for (let i = 1; i <= 7; i++) buffer.pushEvicting(i);
  assert.deepEqual(buffer.toArray(), [5, 6, 7]);
  assert.equal(buffer.length, 3);
  assert.equal(buffer.shift(), 5);
  buffer.pushEvicting(8);
  assert.deepEqual(buffer.toArray(), [6, 7, 8], 'a free slot is used before anything is evicted');
});

test('order holds across the wrap-around of the underlying array', () => {
  const buffer = new CircularBuffer<number>(3);
  const seen: number[] = [];
  for (let i = 0; i < 10; i += 2) {
    buffer.push(i);
    buffer.push(i + 1);
    seen.push(buffer.shift() as number, buffer.shift() as number);
  }
  assert.deepEqual(seen, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  for (const n of [10, 11, 12]) buffer.push(n);
  assert.deepEqual(buffer.toArray(), [10, 11, 12], 'the head is past the end of the array by now');
  assert.equal(buffer.push(13), false);
});

test('drain empties oldest first; an empty buffer shifts undefined', () => {
  const buffer = new CircularBuffer<number>(2);
  buffer.pushEvicting(1);
  buffer.pushEvicting(2);
  buffer.pushEvicting(3);
  assert.deepEqual(buffer.drain(), [2, 3]);
  assert.deepEqual([buffer.length, buffer.shift(), buffer.toArray()], [0, undefined, []]);
});

test('the capacity is a positive integer', () => {
  for (const capacity of [0, -1, 1.5, Number.NaN]) assert.throws(() => new CircularBuffer(capacity), RangeError);
});
