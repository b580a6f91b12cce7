import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp } from '../../../test/helpers/test-app.js';
import type { TestApp } from '../../../test/helpers/test-app.js';
import type { PlaybackErrorReport } from '../../platform/error-report-sink.js';
import { PlaylineApiError } from '../../client/index.js';
import { startLocalReceiver } from '../../platform/outbound/testing/local-receiver.js';
import type { LocalReceiver } from '../../platform/outbound/testing/local-receiver.js';
import { WebhookSigner } from '../../platform/outbound/webhook-signature.js';

// Receivers are real HTTP servers on 127.0.0.1, admitted by the allow-list as in local development.
const env = { PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32' };
const opts = { timeout: 15_000 };

const playbackError = (owner: string, code = 403): PlaybackErrorReport => ({
  owner,
  url: 'https://edge.example.com/play/asset9.m3u8?exp=1',
  ip: '198.51.100.23',
  code,
  ua: 'Player/3',
  msg: 'Expired token',
  timestamp: 1_763_719_200,
  errorCode: 104,
});

/** Checks a received callback's signature with the given secrets (our signer is itself checked against the published verifier). */
const signedWith = (secret: string, got: LocalReceiver['received'][number]): boolean => {
  const id = String(got.headers['webhook-id']);
  const ts = Number(got.headers['webhook-timestamp']);
  const expected = new WebhookSigner([secret]).sign(id, ts, got.body)['webhook-signature'];
  return String(got.headers['webhook-signature']).split(' ').includes(expected);
};

describe('error reporting settings', () => {
  let t: TestApp;
  let ok: LocalReceiver;
  let notFound: LocalReceiver;

  before(async () => {
    t = await createTestApp({ env });
    ok = await startLocalReceiver({ kind: 'status', status: 200 }, { hangLimitMs: 10_000 });
    notFound = await startLocalReceiver({ kind: 'status', status: 404 }, { hangLimitMs: 10_000 });
  });
  after(async () => {
    await t.close();
    await ok.close();
    await notFound.close();
  });

  test('GET shows no callback and a stable signing secret; unsigned is 401', opts, async () => {
    const first = await t.client.errorReporting.getSettings();
    assert.equal(first['@id'], '/api/v4/error-reporting/settings');
    assert.equal(first.callback_url, null);
    assert.equal(first.enabled, false);
    assert.match(first.signing_secret, /^whsec_/);
    assert.equal((await t.client.errorReporting.getSettings()).signing_secret, first.signing_secret);
    const unsigned = await t.app.inject({ method: 'GET', url: '/api/v4/error-reporting/settings' });
    assert.equal(unsigned.statusCode, 401);
  });

  test('PUT with a URL answering 404 is 422 with what was observed, and saves nothing', opts, async () => {
    const response = await t.client.core.send('PUT', '/api/v4/error-reporting/settings', { body: { callback_url: notFound.url } });
    assert.equal(response.status, 422);
    const problem = JSON.parse(response.body) as { code: string; observed: { outcome: string; status: number; response_excerpt?: string } };
    assert.equal(problem.code, 'callback_test_failed');
    assert.equal(problem.observed.outcome, 'non_200');
    assert.equal(problem.observed.status, 404);
    assert.equal(notFound.count(), 1, 'the test POST was sent');
    const secret = (await t.client.errorReporting.getSettings()).signing_secret;
    const testPost = notFound.received[0];
    assert.ok(testPost && signedWith(secret, testPost), 'the test POST is signed like real reports');
    assert.equal((await t.client.errorReporting.getSettings()).callback_url, null);
    t.runtime.errorReports.submit(playbackError(t.workspace.id));
    assert.equal(t.runtime.errorReporting.dispatcher.routeFor(t.workspace.id), undefined);
  });

  test('PUT with a URL answering 200 saves it, and the next error event arrives there, signed', opts, async () => {
    const saved = await t.client.errorReporting.putSettings({ callback_url: ok.url });
    assert.equal(saved.callback_url, ok.url);
    assert.equal(saved.enabled, true);
    assert.equal(ok.count(), 1, 'the test POST');
    t.runtime.errorReports.submit(playbackError(t.workspace.id, 410));
    await ok.waitFor(2);
    const delivered = ok.received[1];
    assert.ok(delivered);
    assert.deepEqual(JSON.parse(delivered.body), {
      owner: t.workspace.id,
      subtype: 'web',
      url: 'https://edge.example.com/play/asset9.m3u8?exp=1',
      ip: '198.51.100.23',
      code: 410,
      ua: 'Player/3',
      msg: 'Expired token',
      timestamp: 1_763_719_200,
      // The playback error code beside the HTTP status (issue 36).
      error_code: 104,
    });
    assert.equal(delivered.headers['content-type'], 'application/json');
    assert.ok(signedWith(saved.signing_secret, delivered));
  });

  test('deliveries show the attempt and the counters', opts, async () => {
    await waitUntil(async () => (await t.client.errorReporting.deliveries()).counters.delivered >= 1);
    const deliveries = await t.client.errorReporting.deliveries();
    assert.equal(deliveries.callback_url, ok.url);
    assert.equal(deliveries.recent[0]?.outcome, 'delivered');
    assert.equal(deliveries.recent[0]?.status, 200);
    assert.match(deliveries.recent[0]?.ts_iso ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    assert.equal(deliveries.endpoint?.paused_until, null);
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
    assert.match(metrics.body, /playline_error_reporting_attempts_total\{outcome="delivered"\} 1/);
  });

  test('refused URLs: internal addresses are 422, other schemes 400, and nothing is saved', opts, async () => {
    for (const url of ['http://10.1.2.3/hook', 'http://169.254.169.254/latest', 'http://[::1]:9/x']) {
      const response = await t.client.core.send('PUT', '/api/v4/error-reporting/settings', { body: { callback_url: url } });
      assert.equal(response.status, 422, url);
      assert.equal((JSON.parse(response.body) as { code: string }).code, 'callback_url_refused');
    }
    const ftp = await t.client.core.send('PUT', '/api/v4/error-reporting/settings', { body: { callback_url: 'ftp://example.com/x' } });
    assert.equal(ftp.status, 400);
    assert.deepEqual((JSON.parse(ftp.body) as { errors: Array<{ path: string }> }).errors.map((e) => e.path), ['/callback_url']);
    assert.equal((await t.client.errorReporting.getSettings()).callback_url, ok.url);
  });

  test('POST /test runs the test alone and saves nothing', opts, async () => {
    const failed = await t.client.errorReporting.test(notFound.url);
    assert.equal(failed.passed, false);
    assert.equal(failed.observed.status, 404);
    const saved = await t.client.errorReporting.test();
    assert.equal(saved.callback_url, ok.url);
    assert.equal(saved.passed, true);
    assert.equal((await t.client.errorReporting.getSettings()).callback_url, ok.url);
  });

  test('another workspace has its own settings and never receives these reports', opts, async () => {
    const other = await t.other.client.errorReporting.getSettings();
    assert.equal(other.callback_url, null);
    assert.notEqual(other.signing_secret, (await t.client.errorReporting.getSettings()).signing_secret);
    assert.equal(t.runtime.errorReporting.dispatcher.submit(playbackError(t.other.workspace.id)), 'no_callback');
  });

  test('rotating the secret: both secrets sign during the grace period', opts, async () => {
    const before = await t.client.errorReporting.getSettings();
    const rotated = await t.client.errorReporting.rotateSecret();
    assert.notEqual(rotated.signing_secret, before.signing_secret);
    assert.equal(rotated.previous_signing_secret_expires_at, t.clock.now() + 24 * 60 * 60 * 1000);
    const n = ok.count();
    t.runtime.errorReports.submit(playbackError(t.workspace.id));
    await ok.waitFor(n + 1);
    const got = ok.received[n];
    assert.ok(got && signedWith(rotated.signing_secret, got) && signedWith(before.signing_secret, got));
  });

  test('DELETE removes the callback; reports then go nowhere', opts, async () => {
    const cleared = await t.client.errorReporting.deleteSettings();
    assert.equal(cleared.callback_url, null);
    assert.equal(cleared.enabled, false);
    assert.equal(t.runtime.errorReporting.dispatcher.submit(playbackError(t.workspace.id)), 'no_callback');
  });

  test('PUT validates its body', opts, async () => {
    for (const body of [{}, { callback_url: '' }, { callback_url: `${ok.url}?${'x'.repeat(2048)}` }, { callback_url: ok.url, enabled: 'yes' }]) {
      const response = await t.client.core.send('PUT', '/api/v4/error-reporting/settings', { body });
      assert.equal(response.status, 400, JSON.stringify(body).slice(0, 80));
    }
    await assert.rejects(t.client.errorReporting.test(), (e: unknown) => e instanceof PlaylineApiError && e.code === 'callback_not_configured');
  });
});

// The runtime's error sink is what statistics ingest calls for every accepted `error` event
// (after its journal append). A receiver that never answers must not hold that call up or let
// memory grow: asserted on queue sizes and on every call returning, never on timing.
describe('error events against a hanging receiver', () => {
  let t: TestApp;
  let hanging: LocalReceiver;

  before(async () => {
    // The accounting below holds only while no attempt ends. The attempt timeout runs on the test
    // app's fake clock, so it never fires here; the client's real-time backstop (twice the timeout,
    // so the longest setting: 120 s) and the receiver's own hang limit are far beyond the run, which
    // took more than 5 s at a load of 30 (539,988 != 1,000,000 with the 5 s default).
    t = await createTestApp({ env: { PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32', PLAYLINE_CALLBACK_QUEUE: '1000', PLAYLINE_CALLBACK_TIMEOUT_MS: '60000' } });
    hanging = await startLocalReceiver({ kind: 'status', status: 200 }, { hangLimitMs: 600_000 });
    await t.client.errorReporting.putSettings({ callback_url: hanging.url });
    hanging.setBehaviour({ kind: 'hang' });
  });
  after(async () => {
    await t.close();
    await hanging.close();
  });

  test('1,000,000 error events (100,000 through the ingest API): all accepted, queues stay bounded', { timeout: 600_000 }, async () => {
    const event: PlaybackErrorReport = {
      owner: t.workspace.id,
      url: 'https://edge.example.com/play/a.m3u8',
      ip: '203.0.113.4',
      code: 403,
      ua: 'Player/1',
      msg: 'Invalid token signature',
      timestamp: 1_763_719_200,
      errorCode: 110,
    };
    // Through the ingest API first: every batch is accepted in full while the receiver hangs.
    const line = JSON.stringify({ type: 'error', owner: t.workspace.id, asset_id: 'a1', session_id: 's1', error_code: 110, http_status: 403, url: event.url, ip: event.ip, ua: event.ua });
    const batch = `${Array.from({ length: 5000 }, () => line).join('\n')}\n`;
    for (let i = 0; i < 20; i += 1) {
      const response = await t.client.core.send('POST', '/api/v4/monitoring/events', { body: batch, contentType: 'application/x-ndjson' });
      assert.equal(response.status, 202);
      assert.deepEqual(JSON.parse(response.body), { accepted: 5000, rejected: [], rejected_count: 0 });
    }
    const sink = t.runtime.errorReports;
    let maxQueued = 0;
    // Then the rest of the million straight into the sink ingest calls after its journal append.
    for (let batch = 0; batch < 90; batch += 1) {
      for (let i = 0; i < 10_000; i += 1) sink.submit(event);
      // Between ingest batches the event loop turns, so delivery gets its chances to run.
      await new Promise((resolve) => setImmediate(resolve));
      maxQueued = Math.max(maxQueued, t.runtime.errorReporting.dispatcher.stats().queued);
    }
    const stats = t.runtime.errorReporting.dispatcher.stats();
    assert.ok(maxQueued <= 1000, `queued up to ${maxQueued}`);
    const concurrency = t.runtime.config.callbackConcurrency;
    assert.ok(stats.inFlight <= concurrency, `in flight ${stats.inFlight}`);
    assert.ok(hanging.count() <= 1 + concurrency, 'the receiver got the test POST and at most one request per in-flight slot');
    const { dropped } = stats.totals;
    assert.equal(dropped.throttled + stats.queued + stats.inFlight, 1_000_000);
    const deliveries = await t.client.errorReporting.deliveries();
    assert.equal(deliveries.counters.dropped.throttled, dropped.throttled);
    assert.ok((deliveries.endpoint?.queued ?? 0) <= 1000);
  });
});

/** Polls an async condition between event-loop turns (bounded; no time-based waiting). */
const waitUntil = async (condition: () => Promise<boolean>, turns = 1000): Promise<void> => {
  for (let i = 0; i < turns; i += 1) {
    if (await condition()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error('condition not reached');
};
