import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { deflateSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { signatureOf, signV4 } from '../../src/platform/auth/v4-signature.js';
import { createTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../helpers/test-app.js';

const pythonSigner = fileURLToPath(new URL('../fixtures/sign_v4.py', import.meta.url));

/** Query string made by the independent Python implementation. */
const pythonSigned = (owner: string, key: string, timestamp: number): string =>
  execFileSync('python3', [pythonSigner, owner, key, String(timestamp)], { encoding: 'utf8' }).trim();

describe('v4 signed-request authentication', () => {
  let t: TestApp;
  let nowS: number;
  before(async () => {
    t = await createTestApp();
    nowS = Math.floor(t.clock.now() / 1000);
  });
  after(() => t.close());

  const get = async (query: string, headers: Record<string, string> = {}) => {
    const response = await t.app.inject({ method: 'GET', url: `/api/v4/workspace${query ? `?${query}` : ''}`, headers });
    return { status: response.statusCode, body: response.json() as { code?: string; id?: string }, type: response.headers['content-type'] };
  };

  test('a request signed by an independent Python implementation is accepted', async () => {
    const r = await get(pythonSigned(t.workspace.id, t.key.secret, nowS));
    assert.equal(r.status, 200);
    assert.equal(r.body.id, t.workspace.id);
  });

  test('the Authorization: <msg> <sig> form is accepted', async () => {
    const { msg, sig } = signV4(t.workspace.id, t.key.secret, nowS);
    const r = await get('', { authorization: `${msg} ${sig}` });
    assert.equal(r.status, 200);
  });

  test('an unencoded + in msg (read back as a space) still verifies', async () => {
    const stamps = Array.from({ length: 599 }, (_, i) => nowS - 299 + i);
    const signed = stamps.map((s) => signV4(t.workspace.id, t.key.secret, s)).find((s) => s.msg.includes('+'));
    assert.ok(signed, 'some msg in the tolerance window holds a +');
    const r = await get(`msg=${signed.msg}&sig=${signed.sig}`);
    assert.equal(r.status, 200);
  });

  const failures: [string, () => Promise<string>, string][] = [
    ['a flipped byte in sig', async () => {
      const q = new URLSearchParams(pythonSigned(t.workspace.id, t.key.secret, nowS));
      const sig = q.get('sig') ?? '';
      q.set('sig', `${sig[0] === 'a' ? 'b' : 'a'}${sig.slice(1)}`);
      return q.toString();
    }, 'invalid_signature'],
    ['a stale timestamp', async () => pythonSigned(t.workspace.id, t.key.secret, nowS - 301), 'timestamp_out_of_range'],
    ['a timestamp from the future', async () => pythonSigned(t.workspace.id, t.key.secret, nowS + 301), 'timestamp_out_of_range'],
    ['an unknown owner', async () => pythonSigned('f'.repeat(32), t.key.secret, nowS), 'unknown_owner'],
    ['a revoked key', async () => {
      const key = await t.newKey(t.workspace.id);
      await t.runtime.workspaces.revokeKey(t.workspace.id, key.id);
      t.runtime.keyRing.invalidate(t.workspace.id);
      return pythonSigned(t.workspace.id, key.secret, nowS);
    }, 'key_revoked'],
    ['garbage base64', async () => `msg=${encodeURIComponent('!!not*base64!!')}&sig=${'0'.repeat(64)}`, 'malformed_msg'],
    ['base64 that is not zlib data', async () => `msg=${encodeURIComponent(Buffer.from('hello world').toString('base64'))}&sig=${'0'.repeat(64)}`, 'malformed_msg'],
    ['a zlib bomb', async () => {
      const bomb = deflateSync(Buffer.alloc(10 * 1024 * 1024, 0x20), { level: 9 }).toString('base64');
      return `msg=${encodeURIComponent(bomb)}&sig=${signatureOf(t.key.secret, bomb)}`;
    }, 'msg_too_large'],
    ['JSON without _owner', async () => {
      const msg = deflateSync(Buffer.from(JSON.stringify({ _timestamp: nowS })), { level: 9 }).toString('base64');
      return `msg=${encodeURIComponent(msg)}&sig=${signatureOf(t.key.secret, msg)}`;
    }, 'malformed_msg_json'],
    ['a missing sig', async () => new URLSearchParams(pythonSigned(t.workspace.id, t.key.secret, nowS)).toString().replace(/&sig=[0-9a-f]+/, ''), 'missing_signature'],
    ['no credentials at all', async () => '', 'missing_signature'],
  ];

  for (const [name, makeQuery, code] of failures) {
    test(`${name} is a 401 ${code}`, async () => {
      const r = await get(await makeQuery());
      assert.equal(r.status, 401);
      assert.equal(r.body.code, code);
      assert.match(String(r.type), /^application\/problem\+json/);
    });
  }

  test('the failure codes above are distinct for the seven required cases', () => {
    const required = ['invalid_signature', 'timestamp_out_of_range', 'unknown_owner', 'key_revoked', 'malformed_msg', 'msg_too_large', 'missing_signature'];
    assert.equal(new Set(required).size, 7);
    for (const code of required) assert.ok(failures.some((f) => f[2] === code));
  });

  test('an owner-scoped call naming another workspace is 403', async () => {
    const r = await t.client.core.send('GET', `/api/v4/workspaces/${t.other.workspace.id}`);
    assert.equal(r.status, 403);
    assert.equal(JSON.parse(r.body).code, 'forbidden_workspace');
    const own = await t.client.core.send('GET', `/api/v4/workspaces/${t.workspace.id}`);
    assert.equal(own.status, 200);
  });

  test("another workspace's resource is 404", async () => {
    const r = await t.client.core.send('GET', `/api/v4/workspace/keys/${t.other.key.id}`);
    assert.equal(r.status, 404);
    assert.equal(JSON.parse(r.body).code, 'not_found');
    const own = await t.client.core.send('GET', `/api/v4/workspace/keys/${t.key.id}`);
    assert.equal(own.status, 200);
    assert.equal(JSON.parse(own.body).secret, undefined, 'listing never shows a secret');
  });

  test('an ingest key may not call the owner API', async () => {
    const ingest = await t.newKey(t.workspace.id, 'ingest');
    const r = await t.clientFor(t.workspace.id, ingest.secret).core.send('GET', '/api/v4/workspace');
    assert.equal(r.status, 403);
    assert.equal(JSON.parse(r.body).code, 'key_kind_not_allowed');
  });

  test('the admin API needs the admin token', async () => {
    const none = await t.app.inject({ method: 'GET', url: '/api/v4/admin/workspaces' });
    assert.equal(none.statusCode, 401);
    assert.equal(none.json().code, 'invalid_admin_token');
    const signed = await t.client.core.send('GET', '/api/v4/admin/workspaces');
    assert.equal(signed.status, 401);
    const ok = await t.app.inject({ method: 'GET', url: '/api/v4/admin/workspaces', headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
    assert.equal(ok.statusCode, 200);
    assert.equal(ok.json().total_items, 2);
  });

  test('a key created and revoked through the admin API works, then stops working', async () => {
    const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
    const created = await t.app.inject({ method: 'POST', url: `/api/v4/admin/workspaces/${t.workspace.id}/keys`, headers: admin, payload: { label: 'ci' } });
    assert.equal(created.statusCode, 201);
    const key = created.json() as { id: string; secret: string };
    const client = t.clientFor(t.workspace.id, key.secret);
    assert.equal((await client.core.send('GET', '/api/v4/workspace')).status, 200);
    const revoked = await t.app.inject({ method: 'DELETE', url: `/api/v4/admin/workspaces/${t.workspace.id}/keys/${key.id}`, headers: admin });
    assert.equal(revoked.statusCode, 200);
    assert.equal(typeof revoked.json().revoked_at, 'number');
    const after = await client.core.send('GET', '/api/v4/workspace');
    assert.equal(after.status, 401);
    assert.equal(JSON.parse(after.body).code, 'key_revoked');
  });
});
