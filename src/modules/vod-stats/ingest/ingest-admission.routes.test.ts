import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTestApp, type TestApp } from '../../../../test/helpers/test-app.js';
import { signV4 } from '../../../platform/auth/v4-signature.js';
import { MAX_EVENT_BATCH_BYTES } from '../events.schema.js';

interface Answer {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
}

/**
 * Concurrent maximum-size batches over a real socket, their bodies held back by the test, so
 * which batches are in flight at once is decided here (not by machine speed).
 */
describe('ingest bytes in flight are bounded (503 + Retry-After before the body is read)', () => {
  let t: TestApp;
  let port: number;
  before(async () => {
    // Room for two 16 MiB batches at once.
    t = await createTestApp({ env: { PLAYLINE_INGEST_MAX_BYTES_IN_FLIGHT: String(2 * MAX_EVENT_BATCH_BYTES) } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as AddressInfo).port;
  });
  after(() => t.close());

  /** A maximum-size NDJSON batch: `good` events, then junk lines up to 16 MiB. */
  const batch = (tag: string, good: number): Buffer => {
    const lines = Array.from({ length: good }, (_, i) => JSON.stringify({ type: 'start', owner: t.workspace.id, asset_id: `inflight-${tag}`, session_id: `s${i}` }));
    const head = `${lines.join('\n')}\n`;
    return Buffer.concat([Buffer.from(head), Buffer.alloc(MAX_EVENT_BATCH_BYTES - head.length, '{"type":"start","owner":"nobody","asset_id":"x","session_id":\n')]);
  };

  /** Starts a POST of `body` and sends only `sent` bytes of it; `finish` sends the rest. */
  const post = (body: Buffer, sent: number): { req: ClientRequest; answer: Promise<Answer>; finish: () => void } => {
    const { msg, sig } = signV4(t.workspace.id, t.key.secret, Math.floor(t.clock.now() / 1000));
    const req = request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: `/api/v4/monitoring/events?msg=${encodeURIComponent(msg)}&sig=${sig}`,
      headers: { 'content-type': 'application/x-ndjson', 'content-length': body.length },
    });
    const answer = new Promise<Answer>((resolve, reject) => {
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }));
      });
      // A refused request may see its connection closed while the rest of its body is unsent.
      req.on('error', (err: NodeJS.ErrnoException) => (err.code === 'EPIPE' || err.code === 'ECONNRESET' ? undefined : reject(err)));
    });
    req.write(body.subarray(0, sent));
    return { req, answer, finish: () => req.end(body.subarray(sent)) };
  };

  test('two batches in flight fill the room: a third is refused at once, the two are accepted, then room is back', async () => {
    const first = post(batch('a', 500), 1024);
    const second = post(batch('b', 700), 1024);
    // Both are admitted (their bodies are arriving); wait until the server holds both.
    while (t.runtime.vodStats.admission.bytesInFlight < 2 * MAX_EVENT_BATCH_BYTES) await new Promise((resolve) => setImmediate(resolve));
    const third = post(batch('c', 100), 0);
    const refused = await third.answer;
    assert.equal(refused.status, 503);
    assert.equal(refused.headers['retry-after'], '1');
    assert.match(refused.headers['content-type'] ?? '', /^application\/problem\+json/);
    assert.equal((JSON.parse(refused.body) as { code: string }).code, 'service_unavailable');
    third.req.destroy();

    first.finish();
    second.finish();
    const [a, b] = await Promise.all([first.answer, second.answer]);
    assert.deepEqual([a.status, b.status], [202, 202]);
    const resultA = JSON.parse(a.body) as { accepted: number; rejected_count: number; rejected: unknown[] };
    assert.equal(resultA.accepted, 500);
    assert.ok(resultA.rejected_count > 200_000 && resultA.rejected.length === 100);
    assert.equal((JSON.parse(b.body) as { accepted: number }).accepted, 700);
    assert.equal((await t.client.vodStats.asset('inflight-b')).stats.sessions.new, 700);
    assert.equal(t.runtime.vodStats.admission.bytesInFlight, 0, 'every reservation released');

    const fourth = post(batch('d', 10), 0);
    fourth.finish();
    assert.equal((await fourth.answer).status, 202);
    const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    assert.match(metrics, /^playline_vod_stats_ingest_refused_total 1$/m);
  });

  test('a client that hangs up mid-body gives its room back', async () => {
    const gone = post(batch('gone', 1), 4096);
    while (t.runtime.vodStats.admission.bytesInFlight === 0) await new Promise((resolve) => setImmediate(resolve));
    gone.req.destroy();
    gone.answer.catch(() => undefined);
    while (t.runtime.vodStats.admission.bytesInFlight !== 0) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.equal(t.runtime.vodStats.admission.bytesInFlight, 0);
  });
});
