import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BucketSeries, F, MANIFEST_LATENCY } from './bucket-series.js';

test('buckets stay in time order whatever order events come in, and a range sums exactly its buckets', () => {
  const series = new BucketSeries();
  for (const t of [10, 5, 12, 5, 7, 12, 12]) series.add(t, F.requests);
  series.addLatency(7, MANIFEST_LATENCY, 4);
  series.addLatency(12, MANIFEST_LATENCY, 0.5);
  series.addLatency(5, MANIFEST_LATENCY, 9);
  series.addError(12, 103);
  series.addError(5, 103);
  series.addError(12, 999);
  series.addError(12, 103);
  assert.deepEqual(Array.from({ length: series.length }, (_, i) => series.timeAt(i)), [5, 7, 10, 12]);
  const window = series.sum(6, 12);
  assert.deepEqual([window.requests, window.manifestLatency], [5, { min: 0.5, max: 4, sum: 4.5, count: 2 }]);
  assert.deepEqual([...window.errors].sort(), [[103, 2], [999, 1]]);
  assert.equal(series.total(5, 10, F.requests), 4);
  assert.equal(series.dropBefore(10), 2);
  assert.deepEqual(series.toJSON()[1], [12, 103, 2, 12, 999, 1]);
  assert.deepEqual(BucketSeries.fromJSON(JSON.parse(JSON.stringify(series))).sum(0, 99), series.sum(0, 99));
});

test('a stored series is checked, never trusted: out of order, wrong length or non-finite numbers are refused', () => {
  const good = new BucketSeries();
  good.add(1, F.starts);
  good.add(2, F.starts);
  const [cells] = good.toJSON();
  assert.throws(() => BucketSeries.fromJSON([[...cells.slice(13), ...cells.slice(0, 13)], []]), /out of order/);
  assert.throws(() => BucketSeries.fromJSON([cells.slice(1), []]), /malformed/);
  assert.throws(() => BucketSeries.fromJSON([cells.map((v, i) => (i === 7 ? Infinity : v)), []]), /non-finite/);
  assert.throws(() => BucketSeries.fromJSON([cells.map((v, i) => (i === 7 ? null : v)), []]), /non-finite/);
  assert.throws(() => BucketSeries.fromJSON({}), /malformed/);
});

test('a sample that opens its bucket is kept (the bucket array may be replaced as it grows)', () => {
  const series = new BucketSeries();
  series.addLatency(5, MANIFEST_LATENCY, 7);
  series.addLatency(3, MANIFEST_LATENCY, 2);
  series.addLatency(9, MANIFEST_LATENCY, 1);
  assert.deepEqual(series.sum(0, 10).manifestLatency, { min: 1, max: 7, sum: 10, count: 3 });
});
