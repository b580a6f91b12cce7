import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sessionHash } from './session-hash.js';

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
});
