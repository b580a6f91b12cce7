import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runningServerProcesses, startServerProcess } from './server-process.js';

// The helper that starts a server must leave no process behind when a start fails: a leaked
// server held two e2e files open for ever (Node's runner ends a file when its event loop drains).
const dataDir = () => ({ PLAYLINE_DATA_DIR: mkdtempSync(join(tmpdir(), 'playline-server-process-')) });

test('a server that exits before listening: the start fails with its output, and no process is left', async () => {
  await assert.rejects(startServerProcess({ ...dataDir(), PLAYLINE_LOG_LEVEL: 'not-a-level' }), /exited with \d+ before listening/);
  assert.equal(runningServerProcesses(), 0);
});

test('a start past its guard (here 1 ms, before any server could listen): the child is killed and awaited before the error', async () => {
  await assert.rejects(startServerProcess(dataDir(), [], { startLimitMs: 1 }), /did not start within 1 ms/);
  assert.equal(runningServerProcesses(), 0);
});

test('a started server is counted until it is stopped', async () => {
  const server = await startServerProcess(dataDir());
  assert.equal(runningServerProcesses(), 1);
  await server.stop();
  assert.equal(runningServerProcesses(), 0);
});
