import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from '../../cli/main.js';
import { TEST_ADMIN_TOKEN, createTestApp, type TestApp } from '../../../test/helpers/test-app.js';

describe('ingest grants: admin API and CLI', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());
  const admin = (method: 'GET' | 'PUT' | 'DELETE', url: string, token = TEST_ADMIN_TOKEN) =>
    t.app.inject({ method, url: `/api/v4/admin/workspaces/${url}`, headers: { authorization: `Bearer ${token}` } });

  test('PUT grants (201, then 200), GET lists, DELETE revokes (then 404); unknown workspaces 404, a self grant 422, the admin token required', async () => {
    const owner = t.workspace.id;
    const grantee = t.other.workspace.id;
    const created = await admin('PUT', `${owner}/ingest-grants/${grantee}`);
    assert.equal(created.statusCode, 201);
    const view = { '@id': `/api/v4/admin/workspaces/${owner}/ingest-grants/${grantee}`, '@type': 'IngestGrant', workspace_id: owner, grantee_id: grantee, created_at: t.clock.now() };
    assert.deepEqual(created.json(), view);
    assert.equal((await admin('PUT', `${owner}/ingest-grants/${grantee}`)).statusCode, 200);
    assert.deepEqual((await admin('GET', `${owner}/ingest-grants`)).json(), { '@id': `/api/v4/admin/workspaces/${owner}/ingest-grants`, '@type': 'Collection', items: [view], total_items: 1 });
    assert.deepEqual((await admin('DELETE', `${owner}/ingest-grants/${grantee}`)).json(), view);
    assert.equal((await admin('DELETE', `${owner}/ingest-grants/${grantee}`)).statusCode, 404);
    assert.equal((await admin('PUT', `${owner}/ingest-grants/nobody`)).statusCode, 404);
    assert.equal((await admin('GET', 'nobody/ingest-grants')).statusCode, 404);
    assert.equal((await admin('PUT', `${owner}/ingest-grants/${owner}`)).json<{ code: string }>().code, 'unprocessable');
    assert.equal((await admin('GET', `${owner}/ingest-grants`, 'wrong-token-0123456789')).statusCode, 401);
  });

  test('the CLI grants, lists and revokes on the same data', async () => {
    const cli = async (...args: string[]) => {
      const out: string[] = [];
      const write = process.stdout.write.bind(process.stdout);
      // The CLI writes strings; the test runner's own messages (Buffers, while the CLI loads its runtime lazily) go through.
      process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) =>
        typeof chunk === 'string' ? out.push(chunk) > 0 : (write as (c: Uint8Array, ...r: unknown[]) => boolean)(chunk, ...rest)) as typeof process.stdout.write;
      try {
        const code = await runCli(['node', 'playline', 'ingest-grants', ...args, '--data-dir', t.runtime.config.dataDir, '--secret-key', t.runtime.config.secretKey ?? '', '--json']);
        return { code, json: out.length > 0 ? (JSON.parse(out.join('')) as unknown) : undefined };
      } finally {
        process.stdout.write = write;
      }
    };
    const owner = t.other.workspace.id;
    const grantee = t.workspace.id;
    const granted = await cli('grant', '--owner', owner, '--grantee', grantee);
    assert.equal(granted.code, 0);
    const { created_at: createdAt, ...grant } = granted.json as { created_at: string };
    assert.deepEqual(grant, { workspace_id: owner, grantee_id: grantee });
    assert.match(createdAt, /^\d{4}-\d\d-\d\dT/, 'the CLI runs on the system clock');
    assert.deepEqual(((await cli('list', '--owner', owner)).json as { grantee_id: string }[]).map((g) => g.grantee_id), [grantee]);
    assert.equal((await admin('GET', `${owner}/ingest-grants`)).json<{ total_items: number }>().total_items, 1, 'the server sees it');
    assert.equal((await cli('revoke', '--owner', owner, '--grantee', grantee)).code, 0);
    assert.deepEqual((await cli('list', '--owner', owner)).json, []);
  });
});
