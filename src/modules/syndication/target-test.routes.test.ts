import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type AddressInfo } from 'node:net';
import { startFakeRtmpServer, type FakeRtmpServer } from './fake-rtmp-server.test-support.js';
import { createSyndicationTestApp, type SyndicationTestApp } from './syndication.test-support.js';

const closedPort = async (): Promise<number> => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
};

describe('PATCH /syndication-target-test/<id>', () => {
  let s: SyndicationTestApp;
  let guarded: SyndicationTestApp;
  let rtmp: FakeRtmpServer;
  before(async () => {
    rtmp = await startFakeRtmpServer();
    s = await createSyndicationTestApp();
    guarded = await createSyndicationTestApp({ env: { PLAYLINE_OUTBOUND_ALLOWLIST: '' } });
  });
  after(async () => {
    await s.close();
    await guarded.close();
    await rtmp.close();
  });

  const rtmpTarget = (app: SyndicationTestApp, port: number) =>
    app.api.createTarget({ platform: 'Custom', target_protocol: 'rtmp', target_stream: `rtmp://127.0.0.1:${port}/live/key-SECRET` });

  test('passes against the local fake RTMP server (allow-listed loopback)', async () => {
    const target = await rtmpTarget(s, rtmp.port);
    const result = await s.api.testTarget(target.id);
    assert.equal(result.outcome, 'passed', JSON.stringify(result));
    assert.equal(result['@type'], 'SyndicationTargetTest');
    assert.equal(result.endpoint, `127.0.0.1:${rtmp.port}`);
    await rtmp.handshakes(1);
    assert.ok(!JSON.stringify(result).includes('SECRET'));
  });

  test('fails cleanly with the reason against a closed port', async () => {
    const target = await rtmpTarget(s, await closedPort());
    const result = await s.api.testTarget(target.id);
    assert.equal(result.outcome, 'failed');
    assert.equal(result.reason, 'refused');
    assert.match(result.detail, /127\.0\.0\.1:\d+/);
  });

  test('the SSRF guard refuses loopback unless the operator allow-list admits it', async () => {
    const before = rtmp.connections;
    const target = await rtmpTarget(guarded, rtmp.port);
    const result = await guarded.api.testTarget(target.id);
    assert.equal(result.outcome, 'failed');
    assert.equal(result.reason, 'blocked');
    assert.equal(rtmp.connections, before, 'no connection was made');
  });

  test('protocols without a connection test answer not_supported', async () => {
    const target = await s.api.createTarget({ platform: 'Custom', target_protocol: 'srt', target_stream: 'srt://127.0.0.1:9000' });
    const result = await s.api.testTarget(target.id);
    assert.equal(result.outcome, 'not_supported');
  });

  test('only the rtmp-connection test exists', async () => {
    const target = await rtmpTarget(s, rtmp.port);
    const response = await s.client.core.send('PATCH', `/api/v4/syndication-target-test/${target.id}`, { body: { test: 'ping' } });
    assert.equal(response.status, 400);
  });
});
