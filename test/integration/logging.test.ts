import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../src/platform/clock.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { slicerBody, until } from '../../src/modules/managed-slicers/slicer-fixtures.test-support.js';

/** The runtime's one logger: request lines and module lines reach the same destination, with the same base fields. */
describe('one logger for the app and every module', () => {
  const lines: Array<Record<string, unknown>> = [];
  const clock = new FakeClock();
  let t: TestApp;
  before(async () => {
    t = await createTestApp({
      clock,
      env: { PLAYLINE_LOG_LEVEL: 'info', PLAYLINE_SLICER_PROVISION_MS: '1000' },
      logDestination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
    });
  });
  after(() => t.close());

  test('a request line and a module line come from one root (same pid and hostname), the module line names its module', async () => {
    const created = await t.client.managedSlicers.create(slicerBody('Logged'));
    const runner = t.runtime.managedSlicers.runner;
    await until(() => runner.runningTaskIds().length > 0, 'the task running');
    clock.advance(1000);
    await until(() => lines.some((l) => l.msg === 'slicer task completed'), 'the task completed and logged');

    const request = lines.find((l) => l.msg === 'request' && l.url === '/api/v4/managed-slicer/slicers');
    const completed = lines.find((l) => l.msg === 'slicer task completed');
    assert.ok(request, 'Fastify logs through the runtime logger');
    assert.ok(completed);
    assert.equal(completed.module, 'managed-slicers');
    assert.equal(completed.taskId, created.task.id);
    assert.deepEqual([completed.pid, completed.hostname], [request.pid, request.hostname]);
    assert.doesNotMatch(JSON.stringify(lines), /sig=|msg=/, 'no query string is logged');
  });

  test('one compact access line per request: method, path without the query, status, ms and the request id; probes and scrapes left out', async () => {
    lines.length = 0;
    const signed = await t.app.inject({ method: 'GET', url: '/api/v4/workspace?msg=eNqrVipOLS5RsgKRqYklSroqSSWpRcUlSvlFKQVKVgbmhgYm5gYA&sig=0123abcd', headers: { 'x-request-id': 'req-access-1' } });
    const missing = await t.app.inject({ method: 'GET', url: '/api/v4/no-such-route?sig=feed' });
    for (const url of ['/healthz', '/readyz', '/metrics']) assert.equal((await t.app.inject({ method: 'GET', url })).statusCode, 200, url);
    await until(() => lines.some((l) => l.url === '/api/v4/no-such-route'), 'the second access line');

    const access = lines.filter((l) => l.msg === 'request');
    assert.deepEqual(
      access.map((l) => [l.reqId, l.method, l.url, l.status]),
      [
        ['req-access-1', 'GET', '/api/v4/workspace', signed.statusCode],
        [(missing.json() as { request_id?: string }).request_id, 'GET', '/api/v4/no-such-route', 404],
      ],
    );
    for (const line of access) {
      assert.equal(line.level, 30);
      assert.equal(typeof line.ms, 'number');
      assert.ok((line.ms as number) >= 0);
      assert.deepEqual([line.pid, line.hostname], [process.pid, access[0]?.hostname]);
    }
    assert.equal(lines.filter((l) => l.msg === 'incoming request' || l.msg === 'request completed').length, 0, "Fastify's own two lines are gone");
    assert.doesNotMatch(JSON.stringify(lines), /sig=|msg=|healthz|readyz|metrics/);
  });

  test('the access line of an hls push shows its path without the token of the ingest URL', async () => {
    lines.length = 0;
    await t.app.inject({ method: 'PUT', url: '/ingest/hls/ws1/sl1/c2VjcmV0LXRva2Vu/seg3.ts', payload: 'x' });
    await until(() => lines.some((l) => l.msg === 'request'), 'the access line');
    assert.deepEqual(lines.filter((l) => l.msg === 'request').map((l) => l.url), ['/ingest/hls/ws1/sl1/********/seg3.ts']);
    assert.doesNotMatch(JSON.stringify(lines), /c2VjcmV0LXRva2Vu/);
  });

  test('the access line of a playback session request shows its path without the session token (it plays the content until it expires)', async () => {
    lines.length = 0;
    const token = 'c2Vzc2lvbi10b2tlbi1wbGF5cy10aGUtY29udGVudA';
    for (const url of [`/play/s/${token}/360p/playlist.m3u8`, `//play//s/${token}/360p/seg_00001.m4s?CMCD=sid%3D%22x%22`]) await t.app.inject({ method: 'GET', url });
    await until(() => lines.filter((l) => l.msg === 'request').length === 2, 'the access lines');
    assert.deepEqual(lines.filter((l) => l.msg === 'request').map((l) => l.url), ['/play/s/********/360p/playlist.m3u8', '/play/s/********/360p/seg_00001.m4s']);
    assert.doesNotMatch(JSON.stringify(lines), new RegExp(token));
  });

  test('the token stays out of the access line when the push URL doubles its slashes (the router ignores them)', async () => {
    lines.length = 0;
    const forms = ['//ingest/hls/ws1/sl1/c2VjcmV0LXRva2Vu/seg3.ts', '/ingest//hls/ws1//sl1/c2VjcmV0LXRva2Vu/seg3.ts?x=1'];
    for (const url of forms) await t.app.inject({ method: 'PUT', url, payload: 'x' });
    await until(() => lines.filter((l) => l.msg === 'request').length === forms.length, 'the access lines');
    assert.deepEqual(lines.filter((l) => l.msg === 'request').map((l) => l.url), ['/ingest/hls/ws1/sl1/********/seg3.ts', '/ingest/hls/ws1/sl1/********/seg3.ts']);
    assert.doesNotMatch(JSON.stringify(lines), /c2VjcmV0LXRva2Vu/);
  });
});

describe('access lines at warn', () => {
  const lines: Array<Record<string, unknown>> = [];
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ env: { PLAYLINE_LOG_LEVEL: 'warn' }, logDestination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) } });
  });
  after(() => t.close());

  test('are not written (they are info lines)', async () => {
    assert.equal((await t.app.inject({ method: 'GET', url: '/api/v4/no-such-route' })).statusCode, 404);
    assert.deepEqual(lines.filter((l) => l.msg === 'request'), []);
  });
});

describe('a request that logs (at debug)', () => {
  const lines: Array<Record<string, unknown>> = [];
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ env: { PLAYLINE_LOG_LEVEL: 'debug' }, logDestination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) } });
  });
  after(() => t.close());

  test('gets its child logger on first use: the refusal line carries the request id, next to the access line', async () => {
    const refused = await t.app.inject({ method: 'GET', url: '/api/v4/workspace', headers: { 'x-request-id': 'req-refused-1' } });
    assert.equal(refused.statusCode, 401);
    await until(() => lines.some((l) => l.msg === 'request' && l.reqId === 'req-refused-1'), 'the access line');
    const refusal = lines.find((l) => l.msg === 'request refused');
    assert.deepEqual([refusal?.reqId, refusal?.level, refusal?.status], ['req-refused-1', 20, 401]);
  });
});
