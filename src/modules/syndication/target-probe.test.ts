import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { createServer as createHttpServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { FakeClock, systemClock } from '../../platform/clock.js';
import { startFakeRtmpServer } from './fake-rtmp-server.test-support.js';
import type { TargetCreateBody } from './syndication.schema.js';
import { probeEndpoint, probeTarget, type ProbeResult } from './target-probe.js';
import { createOutbound } from '../../platform/net/outbound.js';
import { parseCallbackAllowList } from '../../platform/net/callback-allowlist.js';
import type { HostResolver } from '../../platform/net/ssrf-guard.js';

/** A self-signed certificate for localhost and 127.0.0.1 (valid 2000-2100) and its key: test fixtures, not a secret of any deployment. */
const fixture = (name: string) => readFileSync(new URL(`../../../test/fixtures/${name}`, import.meta.url), 'utf8');
const testCertificatePem = fixture('rtmps-localhost.cert.pem');
const testPrivateKeyPem = fixture('rtmps-localhost.key.pem');

const KEY = 'sk_live_SECRET';
const rtmpTarget = (port: number, scheme = 'rtmp', host = '127.0.0.1'): TargetCreateBody => ({
  platform: 'Custom',
  target_protocol: scheme === 'rtmps' ? 'rtmps' : 'rtmp',
  target_stream: `${scheme}://${host}:${port}/live/${KEY}`,
});
// The test names resolve to loopback, which the allow-list admits (as PLAYLINE_OUTBOUND_ALLOWLIST would).
const resolver: HostResolver = { resolve: async () => [{ address: '127.0.0.1', family: 4 }] };
const outbound = createOutbound({ resolver, allowList: parseCallbackAllowList('127.0.0.1/32') });
const options = { clock: systemClock, timeoutMs: 3000, outbound };

const listen = async (server: Server): Promise<number> => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
};
const closedPort = async (): Promise<number> => {
  const server = createServer();
  const port = await listen(server);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
};
const assertNoSecret = (result: ProbeResult) => assert.ok(!JSON.stringify(result).includes('SECRET'), JSON.stringify(result));

test('passes against the fake RTMP server, which sees a complete handshake', async () => {
  const server = await startFakeRtmpServer();
  try {
    const result = await probeTarget(rtmpTarget(server.port), options);
    assert.equal(result.outcome, 'passed', JSON.stringify(result));
    assert.match(result.outcome === 'passed' ? result.detail : '', /handshake completed with 127\.0\.0\.1:\d+$/);
    await server.handshakes(1);
    assertNoSecret(result);
  } finally {
    await server.close();
  }
});

test('fails cleanly with "refused" against a closed port', async () => {
  const result = await probeTarget(rtmpTarget(await closedPort()), options);
  assert.equal(result.outcome, 'failed');
  assert.equal(result.outcome === 'failed' && result.reason, 'refused');
  assertNoSecret(result);
});

test('a wrong S0 version and a hang-up are bad handshakes', async () => {
  for (const behaviour of ['wrong-version', 'hang-up'] as const) {
    const server = await startFakeRtmpServer({ behaviour });
    try {
      const result = await probeTarget(rtmpTarget(server.port), options);
      assert.equal(result.outcome === 'failed' && result.reason, 'bad_handshake', `${behaviour}: ${JSON.stringify(result)}`);
    } finally {
      await server.close();
    }
  }
});

test('a server that never answers times out on the clock', async () => {
  const server = await startFakeRtmpServer({ behaviour: 'silent' });
  const clock = new FakeClock();
  try {
    const pending = probeTarget(rtmpTarget(server.port), { clock, timeoutMs: 5000, outbound });
    await server.clientHellos(1);
    clock.advance(4999);
    clock.advance(1);
    const result = await pending;
    assert.equal(result.outcome === 'failed' && result.reason, 'timeout', JSON.stringify(result));
  } finally {
    await server.close();
  }
});

test('rtmps: handshake over TLS passes with a trusted certificate, fails as tls_error without', async () => {
  const server = await startFakeRtmpServer({ tls: { key: testPrivateKeyPem, cert: testCertificatePem } });
  try {
    const trusted = await probeTarget(rtmpTarget(server.port, 'rtmps', 'localhost'), { ...options, ca: testCertificatePem });
    assert.equal(trusted.outcome, 'passed', JSON.stringify(trusted));
    const untrusted = await probeTarget(rtmpTarget(server.port, 'rtmps', 'localhost'), options);
    assert.equal(untrusted.outcome === 'failed' && untrusted.reason, 'tls_error', JSON.stringify(untrusted));
    assertNoSecret(untrusted);
  } finally {
    await server.close();
  }
});

test('the outbound guard refuses before any connection is made; an admitted name connects to its pinned address', async () => {
  const server = await startFakeRtmpServer();
  try {
    const result = await probeTarget(rtmpTarget(server.port), {
      ...options,
      // No allow-list: loopback is refused, as in production.
      outbound: createOutbound({ resolver }),
    });
    assert.equal(result.outcome === 'failed' && result.reason, 'blocked');
    assert.match(result.outcome === 'failed' ? result.detail : '', /loopback/);
    assert.equal(server.connections, 0);
    const pinned = await probeTarget(rtmpTarget(server.port, 'rtmp', 'ingest.invalid'), options);
    assert.equal(pinned.outcome, 'passed', 'the connection goes to the pinned address');
  } finally {
    await server.close();
  }
});

test('hls-push: an HTTP answer below 500 passes, 5xx and a closed port fail', async () => {
  let status = 404;
  const http = createHttpServer((req, res) => {
    res.statusCode = req.method === 'HEAD' ? status : 400;
    res.end();
  });
  const port = await listen(http);
  const target = (p: number): TargetCreateBody => ({ platform: 'Custom', target_protocol: 'hls-push', target_stream: `http://127.0.0.1:${p}/push/${KEY}/` });
  try {
    assert.equal((await probeTarget(target(port), options)).outcome, 'passed');
    status = 503;
    const broken = await probeTarget(target(port), options);
    assert.equal(broken.outcome === 'failed' && broken.reason, 'http_error');
    assertNoSecret(broken);
    const closed = await probeTarget(target(await closedPort()), options);
    assert.equal(closed.outcome === 'failed' && closed.reason, 'refused');
  } finally {
    await new Promise<void>((resolve) => http.close(() => resolve()));
  }
});

test('protocols without a connection test say so', () => {
  const cases: TargetCreateBody[] = [
    { platform: 'Custom', target_protocol: 'srt', target_stream: 'srt://h.example:9000' },
    { platform: 'Custom', target_protocol: 'rist', target_stream: 'rist://h.example:5000' },
    { platform: 'Custom', target_protocol: 'hls' },
    { platform: 'Pluto TV', target_protocol: 'zixi', platform_config: { host: 'h', port: 2088, password: 'p', stream_id: 's' } },
    { platform: 'TikTok', target_protocol: 'rtmp', target_stream: KEY },
    { platform: 'YouTube', target_protocol: 'rtmp', platform_config: { integrated: true } },
  ];
  for (const target of cases) assert.ok('unsupported' in probeEndpoint(target), JSON.stringify(target));
  assert.deepEqual(probeEndpoint({ platform: 'Twitch', target_protocol: 'rtmp', target_stream: KEY }), {
    scheme: 'rtmp',
    host: 'live.twitch.tv',
    port: 1935,
    path: '/app/',
  });
});
