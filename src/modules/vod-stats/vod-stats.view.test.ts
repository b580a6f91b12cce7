import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Value } from '@sinclair/typebox/value';
import type { AssetStats, WindowStats } from './store/stats-store.js';
import { isoMicros } from './stats-window.js';
import { VodStatsCollectionSchema, VodStatsSchema, VodStatsSummarySchema } from './vod-stats.schema.js';
import { historyPointBody, vodStatsBody, vodStatsCollectionBody, vodStatsCollectionJson, vodStatsJson, vodStatsSummaryBody } from './vod-stats.view.js';

const TS = Date.UTC(2026, 10, 21, 10, 4, 5, 123);

const window = (over: Partial<WindowStats> = {}): WindowStats => ({
  requests: 0,
  manifest: 0,
  ad: 0,
  new: 0,
  errors: new Map(),
  manifestLatency: { min: 0, max: 0, sum: 0, count: 0 },
  adLatency: { min: 0, max: 0, sum: 0, count: 0 },
  ...over,
});

test('ts_iso is UTC with microseconds', () => {
  assert.equal(isoMicros(TS), '2026-11-21T10:04:05.123000Z');
  assert.equal(isoMicros(0), '1970-01-01T00:00:00.000000Z');
});

test('VodStats: every field as the spec shows it, errors keyed by code, ad latency when it exists', () => {
  const asset: AssetStats = {
    owner: 'ws1',
    assetId: 'abc123',
    ts: TS,
    stats: window({
      requests: 5,
      manifest: 3,
      ad: 2,
      new: 2,
      errors: new Map([
        [110, 1],
        [103, 2],
      ]),
      manifestLatency: { min: 10, max: 20.5, sum: 40.0045, count: 3 },
      adLatency: { min: 100, max: 300, sum: 400, count: 2 },
    }),
  };
  const body = vodStatsBody(asset);
  assert.deepEqual(body, {
    '@id': '/api/v4/monitoring/vod-stats/abc123',
    '@type': 'VodStats',
    id: 'abc123',
    stats: {
      type: 'vod',
      version: 1,
      errors: { '103': 2, '110': 1 },
      latency: {
        manifest: { mean_ms: 13.335, min_ms: 10, max_ms: 20.5 },
        ad: { mean_ms: 200, min_ms: 100, max_ms: 300 },
      },
      sessions: { requests: 5, manifest: 3, ad: 2, new: 2 },
    },
    ts: TS,
    ts_iso: '2026-11-21T10:04:05.123000Z',
  });
  assert.deepEqual(Object.keys(body.stats.errors), ['103', '110']);
  assert.ok(Value.Check(VodStatsSchema, body), [...Value.Errors(VodStatsSchema, body)].map((e) => e.message).join());
});

test('no errors is an empty object, no ad latency omits ad, no manifest sample renders zeros', () => {
  const body = vodStatsBody({ owner: 'ws1', assetId: 'a/b', ts: TS, stats: window({ requests: 1 }) });
  assert.deepEqual(body.stats.errors, {});
  assert.deepEqual(body.stats.latency, { manifest: { mean_ms: 0, min_ms: 0, max_ms: 0 } });
  assert.equal('ad' in body.stats.latency, false);
  assert.equal(body['@id'], '/api/v4/monitoring/vod-stats/a%2Fb');
  assert.ok(Value.Check(VodStatsSchema, body));
});

test('VodStatsSummary names the owner and the query time', () => {
  const body = vodStatsSummaryBody({ owner: 'ws1', ts: TS, stats: window({ new: 4 }) });
  assert.equal(body['@id'], '/api/v4/monitoring/vod-stats/owner-summary/ws1');
  assert.equal(body['@type'], 'VodStatsSummary');
  assert.equal(body.owner, 'ws1');
  assert.equal(body.ts, TS);
  assert.equal(body.ts_iso, '2026-11-21T10:04:05.123000Z');
  assert.equal(body.stats.sessions.new, 4);
  assert.ok(Value.Check(VodStatsSummarySchema, body));
});

test('Collection: total_items is the number of items returned', () => {
  const items: AssetStats[] = ['a', 'b'].map((id) => ({ owner: 'ws1', assetId: id, ts: TS, stats: window() }));
  const body = vodStatsCollectionBody('/api/v4/monitoring/vod-stats', items);
  assert.equal(body['@type'], 'Collection');
  assert.equal(body['@id'], '/api/v4/monitoring/vod-stats');
  assert.equal(body.total_items, 2);
  assert.deepEqual(body.items.map((i) => i.id), ['a', 'b']);
  assert.ok(Value.Check(VodStatsCollectionSchema, body));
  assert.equal(vodStatsCollectionBody('/x', []).total_items, 0);
});

test('the JSON texts are exactly the serialized bodies, and a repeated read renders once', () => {
  const a: AssetStats = {
    owner: 'ws1',
    assetId: 'x"y',
    ts: TS,
    stats: window({ requests: 2, errors: new Map([[103, 1]]), adLatency: { min: 1, max: 2, sum: 3, count: 2 } }),
  };
  const b: AssetStats = { owner: 'ws1', assetId: 'b', ts: TS + 1, stats: window() };
  assert.equal(vodStatsJson(a), JSON.stringify(vodStatsBody(a)));
  assert.equal(vodStatsJson(a), vodStatsJson(a));
  const collection = vodStatsCollectionJson('/api/v4/monitoring/vod-stats', [a, b]);
  assert.equal(collection, JSON.stringify(vodStatsCollectionBody('/api/v4/monitoring/vod-stats', [a, b])));
  assert.ok(Value.Check(VodStatsCollectionSchema, JSON.parse(collection)));
  assert.equal(vodStatsCollectionJson('/x', []), JSON.stringify(vodStatsCollectionBody('/x', [])));
});

test('latency: mean, min and max are rounded alike (3 decimals), so the mean is never outside [min, max]', () => {
  // One 10.0004 ms sample: the mean rounded alone (10) fell below the unrounded min (10.0004).
  const one = { min: 10.0004, max: 10.0004, sum: 10.0004, count: 1 };
  // Three 0.1 ms samples: sum / count is 0.10000000000000002, above the max before rounding.
  const three = { min: 0.1, max: 0.1, sum: 0.1 + 0.1 + 0.1, count: 3 };
  const body = vodStatsBody({ owner: 'ws1', assetId: 'a', ts: TS, stats: window({ manifestLatency: one, adLatency: three }) });
  assert.deepEqual(body.stats.latency, { manifest: { mean_ms: 10, min_ms: 10, max_ms: 10 }, ad: { mean_ms: 0.1, min_ms: 0.1, max_ms: 0.1 } });
  const spread = vodStatsBody({ owner: 'ws1', assetId: 'a', ts: TS, stats: window({ manifestLatency: { min: 1.23449, max: 7.00051, sum: 8.235, count: 2 } }) });
  assert.deepEqual(spread.stats.latency.manifest, { mean_ms: 4.118, min_ms: 1.234, max_ms: 7.001 });
  const point = historyPointBody({ ts: TS, stats: window({ manifestLatency: one }), rebuffers: 0, startup: { count: 1, sum: 900.0004, max: 900.0004 } });
  assert.deepEqual(point.latency.manifest, { samples: 1, mean_ms: 10, min_ms: 10, max_ms: 10 });
  assert.deepEqual(point.startup, { samples: 1, mean_ms: 900, max_ms: 900 });
});
