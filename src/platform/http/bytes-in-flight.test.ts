import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BytesInFlight } from './bytes-in-flight.js';

test('a lease is given back exactly once, and cannot grow once released (a chunk after the answer takes nothing)', () => {
  const budget = new BytesInFlight(100);
  const lease = budget.lease(0);
  assert.ok(lease);
  assert.ok(lease.growTo(60));
  assert.equal(budget.bytes, 60);
  assert.equal(budget.lease(50), undefined, 'no room beyond the bound');
  lease.release();
  lease.release();
  assert.equal(budget.bytes, 0);
  assert.equal(lease.growTo(90), false);
  assert.equal(budget.bytes, 0, 'a released lease took nothing');
  assert.equal(budget.refused, 1);
});

test('alwaysAdmitOne admits one request larger than the bound when nothing else is in flight', () => {
  const budget = new BytesInFlight(10, true);
  const big = budget.lease(50);
  assert.ok(big);
  assert.equal(budget.lease(1), undefined);
  big.release();
  assert.ok(budget.lease(1));
});
