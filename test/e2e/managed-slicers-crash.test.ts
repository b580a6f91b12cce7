import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { PlaylineClient } from '../../src/client/index.js';
import type { ManagedSlicerTaskView } from '../../src/modules/managed-slicers/managed-slicers.schema.js';
import { bootstrapCredentials, startServerProcess, type ServerProcess } from '../helpers/server-process.js';

const dataDir = mkdtempSync(join(tmpdir(), 'playline-slicers-e2e-'));
const running: ServerProcess[] = [];
after(async () => {
  for (const server of running) if (server.child.exitCode === null && server.child.signalCode === null) await server.kill9();
  rmSync(dataDir, { recursive: true, force: true });
});

const start = async (provisionMs: number) => {
  const server = await startServerProcess({ PLAYLINE_DATA_DIR: dataDir, PLAYLINE_SLICER_PROVISIONER: 'simulated', PLAYLINE_SLICER_PROVISION_MS: String(provisionMs), PLAYLINE_SLICER_FAILURE_RATE: '0' });
  running.push(server);
  return server;
};

/** Polls the real server until the task is in one of `states` (bounded; asserts no duration). */
async function waitForTask(client: PlaylineClient, id: string, states: string[]): Promise<ManagedSlicerTaskView> {
  let last: ManagedSlicerTaskView | undefined;
  for (let i = 0; i < 400; i++) {
    last = await client.managedSlicers.getTask(id);
    if (states.includes(last.state)) return last;
    await delay(25);
  }
  throw new Error(`task ${id} stayed ${last?.state}, never ${states.join('|')}`);
}

test('a task IN_PROGRESS when the server is killed (SIGKILL) reaches a terminal state after restart', async () => {
  // Provisioning that would take 10 minutes: the task is certainly still running when killed.
  const first = await start(600_000);
  const { owner, key: apiKey } = bootstrapCredentials(first);
  const clientOf = (server: ServerProcess) => new PlaylineClient({ baseUrl: server.url, owner, apiKey });

  const before = clientOf(first);
  const slicer = await before.managedSlicers.create({ name: 'Crash test', region: 'eu-central-1', ingest_protocol: 'srt', output_profile: 'hd-1080p' });
  const inProgress = await waitForTask(before, slicer.task.id, ['IN_PROGRESS']);
  assert.equal(inProgress.operation, 'CREATE');
  await first.kill9();

  const second = await start(50);
  const client = clientOf(second);
  const done = await waitForTask(client, slicer.task.id, ['COMPLETED', 'FAILED']);
  assert.equal(done.state, 'COMPLETED', `resumed and completed: ${JSON.stringify(done)}`);
  assert.equal(done.timestamp, inProgress.timestamp, 'the same task, not a new one');
  const after = await client.managedSlicers.get(slicer.id);
  assert.equal(after.state, 'running');
  assert.match(after.ingest_url ?? '', /^srt:\/\//);
  const { page } = await client.managedSlicers.listTasks({ slicer_id: slicer.id });
  assert.deepEqual(page.items.map((t) => `${t.operation}:${t.state}`), ['CREATE:COMPLETED']);
  assert.equal(await second.stop(), 0, 'graceful shutdown');
});
