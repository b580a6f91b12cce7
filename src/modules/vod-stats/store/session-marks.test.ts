import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sessionHash } from '../session-hash.js';
import { MarkTable, NONE, errorKey } from './session-marks.js';

test('error keys: one session gets a different mark key per error code', () => {
  assert.notEqual(errorKey(sessionHash('a'), 103), errorKey(sessionHash('a'), 104));
});

test('mark table: every key found again through growth, pruned by liveness, absent keys not found', () => {
  const table = new MarkTable(4);
  for (let i = 0; i < 100; i++) {
    const at = table.ensure(sessionHash(`s${i}`));
    table.setSecond(at, 3, i);
  }
  assert.equal(table.size, 100);
  for (let i = 0; i < 100; i++) assert.equal(table.second(table.find(sessionHash(`s${i}`)), 3), i);
  assert.equal(table.find(sessionHash('absent')), -1);
  assert.equal(table.ensure(sessionHash('s7')), table.find(sessionHash('s7')), 'ensure finds before it creates');
  assert.equal(table.prune((second) => second >= 95), 95);
  assert.equal(table.size, 5);
  assert.equal(table.second(table.find(sessionHash('s97')), 3), 97);
  assert.equal(table.find(sessionHash('s3')), -1);
  const fresh = table.ensure(sessionHash('new'));
  assert.deepEqual([1, 2, 3].map((kind) => table.second(fresh, kind)), [NONE, NONE, NONE]);
  // A second of 0 and the largest representable are kept apart from "not set".
  table.setSecond(fresh, 1, 0);
  table.setSecond(fresh, 2, 0xfffffffe);
  assert.deepEqual([1, 2, 3].map((kind) => table.second(fresh, kind)), [0, 0xfffffffe, NONE]);
});

test('mark table: every second of every entry (sessions and error marks) survives each growth of the table', () => {
  for (const stride of [4, 2]) {
    const table = new MarkTable(stride);
    const unset = 7; // every seventh entry keeps its last second unset
    for (let i = 0; i < 1000; i++) {
      const at = table.ensure(sessionHash(`g${i}`));
      for (let kind = 1; kind < stride; kind++) if (!(kind === stride - 1 && i % unset === 0)) table.setSecond(at, kind, i * 10 + kind);
      // Checked after every insert: whatever growth just happened kept every entry whole.
      if (i % 97 === 0 || i === 999) {
        for (let j = 0; j <= i; j++) {
          const found = table.find(sessionHash(`g${j}`));
          for (let kind = 1; kind < stride; kind++) assert.equal(table.second(found, kind), kind === stride - 1 && j % unset === 0 ? NONE : j * 10 + kind, `stride ${stride}, entry ${j}, kind ${kind}`);
        }
      }
    }
    assert.equal(table.size, 1000);
  }
});

test('mark table: keys that share a low word (same first slot) or differ only in the high word stay apart', () => {
  const table = new MarkTable(2);
  const keys = [5, 5 + 2 ** 32, 5 + 2 ** 33, 2 ** 52 + 5, 6, 0];
  keys.forEach((key, i) => table.setSecond(table.ensure(key), 1, 100 + i));
  keys.forEach((key, i) => assert.equal(table.second(table.find(key), 1), 100 + i, `key ${key}`));
  assert.equal(table.find(7 + 2 ** 32), -1);
});

test('mark table: the snapshot form lists entries in key order, and loads back to the same table', () => {
  const table = new MarkTable(4);
  for (let i = 0; i < 300; i++) {
    const at = table.ensure(sessionHash(`s${i}`));
    table.setSecond(at, 1 + (i % 3), 1_763_719_200 + i);
  }
  const json = table.toJSON();
  assert.equal(json.length, 300 * 4);
  for (let e = 4; e < json.length; e += 4) assert.ok((json[e] as number) > (json[e - 4] as number), 'ascending keys');
  const copy = new MarkTable(4);
  copy.load(json);
  assert.deepEqual(copy.toJSON(), json);
  for (let i = 0; i < 300; i++) assert.equal(copy.second(copy.find(sessionHash(`s${i}`)), 1 + (i % 3)), 1_763_719_200 + i);
  assert.throws(() => new MarkTable(4).load([1, NONE, NONE, NONE, 1, NONE, NONE, NONE]), /repeated/);
  assert.throws(() => new MarkTable(4).load([2 ** 53, NONE, NONE, NONE]), /key/);
  assert.throws(() => new MarkTable(4).load([1, 1.5, NONE, NONE]), /second/);
  assert.throws(() => new MarkTable(2).load([1, 2 ** 32]), /second/);
});

test('mark table: a million sessions of one asset, each found again and none taken for another (collision rate 0 of 1e6; expected n²/2^54 = 6e-5)', () => {
  const table = new MarkTable(4);
  const n = 1_000_000;
  for (let i = 0; i < n; i++) {
    const at = table.ensure(sessionHash(`${i.toString(16).padStart(8, '0')}-sess`));
    assert.equal(table.second(at, 3), NONE, `session ${i} taken for an earlier one`);
    table.setSecond(at, 3, i);
  }
  assert.equal(table.size, n);
  for (let i = 0; i < n; i += 997) assert.equal(table.second(table.find(sessionHash(`${i.toString(16).padStart(8, '0')}-sess`)), 3), i);
});

test('mark table: prune leaves a table whose oldest second is live without walking it, and walks it once the oldest is not', () => {
  for (const size of [5, 500]) {
    const table = new MarkTable(4);
    for (let i = 0; i < size; i++) table.setSecond(table.ensure(sessionHash(`s${i}`)), 1 + (i % 3), 1000 + i);
    let asked = 0;
    assert.equal(table.prune((second) => (asked++, second >= 1000)), 0);
    assert.equal(asked, 1, `size ${size}: one question, about the oldest second`);
    assert.equal(table.prune((second) => second >= 1000 + size - 2), size - 2);
    assert.equal(table.size, 2);
    asked = 0;
    assert.equal(table.prune((second) => (asked++, second >= 1000 + size - 2)), 0);
    assert.equal(asked, 1, 'the oldest is known again after a walk');
  }
});
