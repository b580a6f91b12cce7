import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PlaylineApiError } from '../../client/index.js';
import { createTestApp, type TestApp } from '../../../test/helpers/test-app.js';

describe('signed key management: POST/GET/DELETE /api/v4/workspace/keys', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  test('create shows the secret once; the new key signs; revoke stops it; the list never shows secrets', async () => {
    const created = await t.client.workspace.createKey({ label: 'dashboard', kind: 'api' });
    assert.equal(created.owner, t.workspace.id);
    assert.equal(created.label, 'dashboard');
    assert.equal(typeof created.secret, 'string');
    assert.ok(created.secret?.startsWith(created.prefix));
    const again = await t.client.workspace.keys();
    assert.ok(again.some((k) => k.id === created.id));
    assert.ok(again.every((k) => k.secret === undefined), 'the secret is never shown again');

    const newClient = t.clientFor(t.workspace.id, created.secret ?? '');
    assert.equal((await newClient.workspace.get()).id, t.workspace.id, 'the new key signs requests');

    const revoked = await t.client.workspace.revokeKey(created.id);
    assert.equal(typeof revoked.revoked_at, 'number');
    await assert.rejects(newClient.workspace.get(), (err: unknown) => err instanceof PlaylineApiError && err.status === 401 && err.code === 'key_revoked');
  });

  test('an ingest key can be created; bad bodies are 400', async () => {
    const ingest = await t.client.workspace.createKey({ kind: 'ingest' });
    assert.equal(ingest.kind, 'ingest');
    const bad = await t.client.core.send('POST', '/api/v4/workspace/keys', { body: { kind: 'admin' } });
    assert.equal(bad.status, 400);
    const extra = await t.client.core.send('POST', '/api/v4/workspace/keys', { body: { label: 'x', secret: 'chosen-secret-0123456789' } });
    assert.notEqual((JSON.parse(extra.body) as { secret?: string }).secret, 'chosen-secret-0123456789', 'a caller cannot choose the secret');
  });

  test('the signing key cannot revoke itself (409); another workspace\'s key is 404; an ingest key may not manage keys', async () => {
    const self = await t.client.core.send('DELETE', `/api/v4/workspace/keys/${t.key.id}`);
    assert.equal(self.status, 409);
    assert.match(JSON.parse(self.body).detail as string, /signed with the key it would revoke/);
    assert.equal((await t.client.workspace.get()).id, t.workspace.id, 'still signed in');

    const foreign = await t.client.core.send('DELETE', `/api/v4/workspace/keys/${t.other.key.id}`);
    assert.equal(foreign.status, 404);
    assert.equal((await t.other.client.workspace.get()).id, t.other.workspace.id, 'the other workspace\'s key still works');

    const ingest = await t.newKey(t.workspace.id, 'ingest');
    const asIngest = t.clientFor(t.workspace.id, ingest.secret);
    const refused = await asIngest.core.send('POST', '/api/v4/workspace/keys', { body: {} });
    assert.equal(refused.status, 403);
  });
});
