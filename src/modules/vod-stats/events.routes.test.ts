import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { TEST_ADMIN_TOKEN, createTestApp } from '../../../test/helpers/test-app.js';
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

describe('POST /monitoring/events with a workspace at its asset limit', () => {
  let t: TestApp;
  const reports: PlaybackErrorReport[] = [];
  before(async () => {
    t = await createTestApp({ env: { PLAYLINE_MAX_ASSETS_PER_WORKSPACE: '2' }, overrides: { errorReports: () => ({ submit: (r) => reports.push(r) }) } });
  });
  after(() => t.close());

  test('events for new assets past the limit are rejected as asset_limit_reached by line, not counted as accepted', async () => {
    const owner = t.workspace.id;
    const event = (asset: string, extra: Record<string, unknown> = {}) => JSON.stringify({ type: 'start', owner, asset_id: asset, session_id: 's1', ...extra });
    const body = [event('a'), event('b'), event('c'), 'junk', event('d', { type: 'error', error_code: 104 }), event('a', { session_id: 's2' })].join('\n');
    const result = await t.client.vodStats.ingestRaw(body);
    assert.deepEqual(result, {
      accepted: 3,
      rejected: [
        { index: 2, code: 'asset_limit_reached', detail: 'the workspace holds the maximum number of assets in its statistics; events for new assets are dropped' },
        { index: 3, code: 'malformed_json', detail: 'the line is not valid JSON' },
        { index: 4, code: 'asset_limit_reached', detail: 'the workspace holds the maximum number of assets in its statistics; events for new assets are dropped' },
      ],
      rejected_count: 3,
    });
    assert.deepEqual(reports, [], 'a dropped error event is not reported');
    assert.equal((await t.client.vodStats.asset('a')).stats.sessions.new, 2);
    const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    assert.match(metrics, /^playline_vod_stats_events_dropped_total 2$/m);
    assert.match(metrics, /^playline_vod_stats_events_accepted_total 3$/m);
    assert.match(metrics, /^playline_vod_stats_events_rejected_total 3$/m);
  });
});

describe('POST /monitoring/events', () => {
  let t: TestApp;
  let owner: string;
  const reports: PlaybackErrorReport[] = [];
  const line = (e: Record<string, unknown>) => JSON.stringify({ type: 'start', owner, asset_id: 'a1', session_id: 's1', ...e });
  const adminCall = (method: 'PUT' | 'DELETE' | 'GET', url: string) => t.app.inject({ method, url, headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });

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
    assert.deepEqual(JSON.parse(response.body), { accepted: 3, rejected: [], rejected_count: 0 });
    const stats = await t.client.vodStats.asset('a1');
    assert.deepEqual(stats.stats.sessions, { requests: 1, manifest: 1, ad: 0, new: 1 });
  });

  test('JSON array: 202; a body that is not an array is 400, broken JSON is 400 malformed_json', async () => {
    const ok = await t.client.core.send('POST', EVENTS, { body: [{ type: 'start', owner, asset_id: 'a2', session_id: 's9' }] });
    assert.equal(ok.status, 202);
    assert.deepEqual(JSON.parse(ok.body), { accepted: 1, rejected: [], rejected_count: 0 });
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

  test('16 MiB of junk around good events: 202 listing the first 100 rejections, every good event counted once', async () => {
    const good = Array.from({ length: 1000 }, (_, i) => line({ asset_id: 'junk-batch', session_id: `j${i}` }));
    const head = `${good.join('\n')}\n`;
    const junkLines = Math.floor((16 * 1024 * 1024 - head.length) / 2);
    const body = head + 'x\n'.repeat(junkLines);
    assert.ok(body.length <= 16 * 1024 * 1024);
    const response = await t.client.core.send('POST', EVENTS, { body, contentType: NDJSON });
    assert.equal(response.status, 202, response.body.slice(0, 200));
    const result = JSON.parse(response.body) as { accepted: number; rejected: { index: number; code: string }[]; rejected_count: number };
    assert.equal(result.accepted, 1000);
    assert.equal(result.rejected_count, junkLines);
    assert.equal(result.rejected.length, 100);
    assert.deepEqual(result.rejected[0], { index: 1000, code: 'malformed_json', detail: 'the line is not valid JSON' });
    assert.ok(response.body.length < 20_000, `the answer stays small (${response.body.length} bytes)`);
    assert.equal((await t.client.vodStats.asset('junk-batch')).stats.sessions.new, 1000);
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

  test('an ingest key submits for its workspace and the granting ones only (owner_not_allowed, unknown_owner), and reads nothing', async () => {
    const ingestKey = await t.newKey(owner, 'ingest');
    const playbackServer = t.clientFor(owner, ingestKey.secret);
    const other = t.other.workspace.id;
    const batch = [
      { type: 'start' as const, owner: other, asset_id: 'theirs', session_id: 'x' },
      { type: 'start' as const, owner, asset_id: 'ours', session_id: 'y' },
      { type: 'start' as const, owner: 'no-such-workspace', asset_id: 'nobody', session_id: 'z' },
    ];
    const refused = await playbackServer.vodStats.ingest(batch);
    assert.deepEqual(refused, {
      accepted: 1,
      rejected: [
        { index: 0, code: 'owner_not_allowed', detail: 'this ingest key may not submit events for that workspace' },
        { index: 2, code: 'unknown_owner', detail: 'owner is not a known workspace' },
      ],
      rejected_count: 2,
    });
    await assert.rejects(t.other.client.vodStats.asset('theirs'), { status: 404 });

    const grant = await adminCall('PUT', `/api/v4/admin/workspaces/${other}/ingest-grants/${owner}`);
    assert.equal(grant.statusCode, 201);
    const granted = await playbackServer.vodStats.ingest(batch);
    assert.deepEqual([granted.accepted, granted.rejected.map((r) => r.code)], [2, ['unknown_owner']]);
    assert.equal((await t.other.client.vodStats.asset('theirs')).stats.sessions.new, 1);

    assert.equal((await adminCall('DELETE', `/api/v4/admin/workspaces/${other}/ingest-grants/${owner}`)).statusCode, 200);
    const revoked = await playbackServer.vodStats.ingest([{ ...batch[0], session_id: 'later' } as (typeof batch)[0]]);
    assert.deepEqual(revoked.rejected.map((r) => r.code), ['owner_not_allowed']);

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
    const ingest = JSON.parse((await t.app.inject({ method: 'GET', url: '/api/v4/openapi.json' })).body) as {
      paths: Record<string, { post: { responses: Record<string, { content: Record<string, { schema: { properties: Record<string, unknown> } }> }> } }>;
    };
    const accepted = ingest.paths['/api/v4/monitoring/events']?.post.responses['202']?.content['application/json']?.schema.properties ?? {};
    assert.deepEqual(Object.keys(accepted), ['accepted', 'rejected', 'rejected_count']);
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
