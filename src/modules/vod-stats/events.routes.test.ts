import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp } from '../../../test/helpers/test-app.js';
import type { TestApp } from '../../../test/helpers/test-app.js';
import type { PlaybackErrorReport } from '../../platform/error-report-sink.js';

const EVENTS = '/api/v4/monitoring/events';
const NDJSON = 'application/x-ndjson';

const problemOf = (response: { status: number; headers: Record<string, string>; body: string }) => {
  assert.match(response.headers['content-type'] ?? '', /^application\/problem\+json/);
  const body = JSON.parse(response.body) as { status: number; code: string; request_id: string; detail: string };
  assert.equal(body.status, response.status);
  assert.equal(typeof body.request_id, 'string');
  return body;
};

describe('POST /monitoring/events', () => {
  let t: TestApp;
  let owner: string;
  const reports: PlaybackErrorReport[] = [];
  const line = (e: Record<string, unknown>) => JSON.stringify({ type: 'start', owner, asset_id: 'a1', session_id: 's1', ...e });

  before(async () => {
    t = await createTestApp({ overrides: { errorReports: () => ({ submit: (r) => void reports.push(r) }) } });
    owner = t.workspace.id;
  });
  after(() => t.close());

  test('NDJSON: 202 with accepted and rejected, the events are counted at once', async () => {
    const response = await t.client.core.send('POST', EVENTS, {
      body: [line({ type: 'request' }), line({ type: 'manifest', latency_ms: 20 }), line({})].join('\n'),
      contentType: `${NDJSON}; charset=utf-8`,
    });
    assert.equal(response.status, 202);
    assert.match(response.headers['content-type'] ?? '', /^application\/json/);
    assert.deepEqual(JSON.parse(response.body), { accepted: 3, rejected: [] });
    const stats = await t.client.vodStats.asset('a1');
    assert.deepEqual(stats.stats.sessions, { requests: 1, manifest: 1, ad: 0, new: 1 });
  });

  test('JSON array: 202; a body that is not an array is 400, broken JSON is 400 malformed_json', async () => {
    const ok = await t.client.core.send('POST', EVENTS, { body: [{ type: 'start', owner, asset_id: 'a2', session_id: 's9' }] });
    assert.equal(ok.status, 202);
    assert.deepEqual(JSON.parse(ok.body), { accepted: 1, rejected: [] });
    const notArray = await t.client.core.send('POST', EVENTS, { body: { type: 'start' } });
    assert.equal(notArray.status, 400);
    assert.equal(problemOf(notArray).code, 'validation_failed');
    const broken = await t.client.core.send('POST', EVENTS, { body: '[{"type":', contentType: 'application/json' });
    assert.equal(broken.status, 400);
    assert.equal(problemOf(broken).code, 'malformed_json');
  });

  test('3 bad lines among 1000: 997 accepted, the 3 reported by index with a reason', async () => {
    const lines = Array.from({ length: 1000 }, (_, i) => line({ asset_id: 'bulk', session_id: `b${i}` }));
    lines[0] = 'not json';
    lines[437] = line({ type: 'pause' });
    lines[998] = line({ owner: t.other.workspace.id });
    const result = await t.client.vodStats.ingestRaw(lines.join('\n'));
    assert.equal(result.accepted, 997);
    assert.deepEqual(
      result.rejected.map((r) => [r.index, r.code]),
      [
        [0, 'malformed_json'],
        [437, 'invalid_field'],
        [998, 'owner_mismatch'],
      ],
    );
    for (const r of result.rejected) assert.ok(typeof r.detail === 'string' && r.detail.length > 0);
    assert.equal((await t.client.vodStats.asset('bulk')).stats.sessions.new, 997);
  });

  test('a body over 16 MiB is 413; a wrong content type is 415; unsigned is 401', async () => {
    const big = Buffer.alloc(16 * 1024 * 1024 + 1, 0x20);
    const tooLarge = await t.client.core.send('POST', EVENTS, { body: big, contentType: NDJSON });
    assert.equal(tooLarge.status, 413);
    assert.equal(problemOf(tooLarge).code, 'payload_too_large');
    const text = await t.client.core.send('POST', EVENTS, { body: line({}), contentType: 'text/plain' });
    assert.equal(text.status, 415);
    const unsigned = await t.app.inject({ method: 'POST', url: EVENTS, headers: { 'content-type': NDJSON }, payload: line({}) });
    assert.equal(unsigned.statusCode, 401);
  });

  test('an ingest key may submit for any workspace but may not read statistics', async () => {
    const ingestKey = await t.newKey(owner, 'ingest');
    const playbackServer = t.clientFor(owner, ingestKey.secret);
    const result = await playbackServer.vodStats.ingest([
      { type: 'start', owner: t.other.workspace.id, asset_id: 'theirs', session_id: 'x' },
      { type: 'start', owner, asset_id: 'ours', session_id: 'y' },
    ]);
    assert.deepEqual(result, { accepted: 2, rejected: [] });
    assert.equal((await t.other.client.vodStats.asset('theirs')).stats.sessions.new, 1);
    const read = await playbackServer.core.send('GET', '/api/v4/monitoring/vod-stats/ours');
    assert.equal(read.status, 403);
    assert.equal(problemOf(read).code, 'key_kind_not_allowed');
  });

  test('accepted error events are handed to Error Reporting after they are journaled', async () => {
    reports.length = 0;
    await t.client.vodStats.ingest([
      { type: 'error', owner, asset_id: 'e1', session_id: 's1', error_code: 104, http_status: 403, url: 'https://edge/play/e1.m3u8', ip: '203.0.113.9', ua: 'UA', msg: 'Expired token' },
      { type: 'start', owner, asset_id: 'e1', session_id: 's1' },
    ]);
    assert.equal(reports.length, 1);
    assert.deepEqual(reports[0], {
      owner,
      url: 'https://edge/play/e1.m3u8',
      ip: '203.0.113.9',
      code: 403,
      ua: 'UA',
      msg: 'Expired token',
      timestamp: Math.floor(t.clock.now() / 1000),
      errorCode: 104,
    });
  });

  test('the OpenAPI document describes ingest and the four statistics endpoints', async () => {
    const doc = JSON.parse((await t.app.inject({ method: 'GET', url: '/api/v4/openapi.json' })).body) as { paths: Record<string, unknown> };
    for (const path of [
      '/api/v4/monitoring/events',
      '/api/v4/monitoring/vod-stats',
      '/api/v4/monitoring/vod-stats/search',
      '/api/v4/monitoring/vod-stats/{asset_id}',
      '/api/v4/monitoring/vod-stats/owner-summary/{workspace_id}',
    ]) {
      assert.ok(doc.paths[path], `${path} is documented`);
    }
  });
});
