import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PlaylineApiError } from '../../client/index.js';
import { createTestApp, type TestApp } from '../../../test/helpers/test-app.js';

describe('GET /api/v4/server: the settings an operator checks', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ env: { PLAYLINE_PUBLIC_HOST: 'ingest.example.net', PLAYLINE_SLICER_PORTS: '21000 - 21019', PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32, hooks.internal' } });
  });
  after(() => t.close());

  test('what encoders must reach, what the guard lets through, the media tools, and no secret', async () => {
    const settings = await t.client.serverSettings();
    assert.equal(settings['@type'], 'ServerSettings');
    assert.equal(settings.mode, 'embedded');
    assert.equal(settings.ingest.public_host, 'ingest.example.net');
    assert.equal(settings.ingest.port_range, '21000-21019');
    assert.equal(settings.ingest.slicer_provisioner, 'simulated');
    assert.deepEqual(settings.outbound_allowlist, ['127.0.0.1/32', 'hooks.internal']);
    assert.equal(typeof settings.media_tools.available, 'boolean');
    const text = JSON.stringify(settings);
    for (const secret of [t.key.secret ?? '', Buffer.alloc(32, 7).toString('base64'), 'test-admin-token']) assert.equal(text.includes(secret), false);
  });

  test('unsigned: 401', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v4/server' });
    assert.equal(res.statusCode, 401);
    await assert.rejects(t.clientFor(t.workspace.id, 'wrong-key').serverSettings(), (err: unknown) => err instanceof PlaylineApiError && err.status === 401);
  });
});
