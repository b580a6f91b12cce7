import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MarkTable, NONE, errorKey, sessionHash } from './session-marks.js';

test('session hashes: a million distinct ids of the shapes players send give a million distinct 53-bit hashes', () => {
  const seen = new Set<number>();
  for (let i = 0; i < 1_000_000; i++) {
    const id = i % 2 === 0 ? `s${i}` : `${i.toString(16).padStart(8, '0')}-4b1c-9e0f-${(i * 7919).toString(16).padStart(12, '0')}`;
    const h = sessionHash(id);
    assert.ok(Number.isSafeInteger(h) && h >= 0);
    seen.add(h);
  }
  // At 1e6 ids the expected number of colliding pairs is 1e12 / 2^54, about 0.00006.
  assert.equal(seen.size, 1_000_000);
  assert.notEqual(sessionHash('a'), sessionHash('b'));
  assert.notEqual(errorKey(sessionHash('a'), 103), errorKey(sessionHash('a'), 104));
});

test('mark table: found by scanning while small, through the index once large, pruned by liveness', () => {
  const table = new MarkTable(4);
  for (let i = 0; i < 100; i++) {
    const at = table.ensure(sessionHash(`s${i}`));
    table.entries[at + 3] = i;
  }
  assert.equal(table.size, 100);
  for (let i = 0; i < 100; i++) assert.equal(table.entries[table.find(sessionHash(`s${i}`)) + 3], i);
  assert.equal(table.find(sessionHash('absent')), -1);
  assert.equal(table.ensure(sessionHash('s7')), table.find(sessionHash('s7')), 'ensure finds before it creates');
  assert.equal(table.prune((second) => second >= 95), 95);
  assert.equal(table.size, 5);
  assert.equal(table.entries[table.find(sessionHash('s97')) + 3], 97);
  assert.equal(table.find(sessionHash('s3')), -1);
  const fresh = table.ensure(sessionHash('new'));
  assert.deepEqual(table.entries.slice(fresh + 1, fresh + 4), [NONE, NONE, NONE]);
});
