import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { playline } from '../helpers/cli.js';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.js';

const ADMIN = 'e2e-admin-token-0123456789';

describe('deleting workspaces from the command line', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'playline-delete-e2e-'));
  const env = { PLAYLINE_DATA_DIR: dataDir, PLAYLINE_ADMIN_TOKEN: ADMIN };
  let server: ServerProcess;
  const workspaceIds = async () => {
    const response = await fetch(`${server.url}/api/v4/admin/workspaces`, { headers: { authorization: `Bearer ${ADMIN}` } });
    return ((await response.json()) as { items: { id: string }[] }).items.map((w) => w.id).sort();
  };
  before(async () => {
    server = await startServerProcess(env);
  });
  after(async () => {
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('simulate --cleanup deletes the workspaces it created, with their data', async () => {
    const before = await workspaceIds();
    const result = await playline(['simulate', '--base-url', server.url, '--rate', '5', '--duration', '1s', '--owners', '2', '--assets', '2', '--cleanup', '--json'], env);
    assert.equal(result.status, 0, result.stderr);
    const summary = JSON.parse(result.stdout) as { owners: string[]; deleted_owners: string[]; server: { matches: boolean } };
    assert.equal(summary.server.matches, true);
    assert.equal(summary.deleted_owners.length, 2);
    assert.deepEqual([...summary.deleted_owners].sort(), [...summary.owners].sort());
    assert.deepEqual(await workspaceIds(), before, 'no workspace left behind');
  });

  test('playline workspaces delete asks for --yes, then deletes (while the server runs)', async () => {
    const created = JSON.parse((await playline(['workspaces', 'create', '--name', 'Doomed', '--json'], env)).stdout) as { id: string };
    assert.ok((await workspaceIds()).includes(created.id));

    const unconfirmed = await playline(['workspaces', 'delete', created.id], env);
    assert.equal(unconfirmed.status, 1);
    assert.match(unconfirmed.stderr, new RegExp(`deleting workspace ${created.id} \\(Doomed\\) removes all its data.*--yes`));
    assert.ok((await workspaceIds()).includes(created.id), 'nothing deleted without --yes');

    const confirmed = await playline(['workspaces', 'delete', created.id, '--yes', '--json'], env);
    assert.equal(confirmed.status, 0, confirmed.stderr);
    assert.equal((JSON.parse(confirmed.stdout) as { id: string }).id, created.id);
    assert.equal((await workspaceIds()).includes(created.id), false);

    const unknown = await playline(['workspaces', 'delete', created.id, '--yes'], env);
    assert.equal(unknown.status, 1);
    assert.match(unknown.stderr, /does not exist \(not_found\)/);
  });
});
