import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../../src/platform/clock.js';
import { loadConfig } from '../../src/platform/config.js';
import { createRuntime } from '../../src/runtime.js';

// The journal still holds the deleted workspace's batches: a start that replays it (a crash
// before any snapshot) must not bring its statistics back.
test('a deleted workspace\'s statistics do not come back when the journal is replayed', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'playline-deletion-restart-'));
  const config = loadConfig({ PLAYLINE_DATA_DIR: dataDir, PLAYLINE_SECRET_KEY: Buffer.alloc(32, 3).toString('base64'), PLAYLINE_LOG_LEVEL: 'silent' });
  const clock = new FakeClock();
  const first = await createRuntime(config, { clock });
  let second: Awaited<ReturnType<typeof createRuntime>> | undefined;
  try {
    await first.start();
    const gone = await first.workspaces.createWorkspace('Gone');
    const kept = await first.workspaces.createWorkspace('Kept');
    for (const owner of [gone.id, kept.id]) {
      const body = Buffer.from(`${JSON.stringify({ type: 'start', owner, asset_id: 'a1', session_id: 's1', ts: clock.now() })}\n`);
      assert.equal((await first.vodStats.ingest.ingest(body, 'ndjson', { owner, kind: 'api' })).accepted, 1);
    }
    await first.workspaceDeletion.delete(gone.id);
    assert.deepEqual(await first.vodStats.store.ownerIds(), [kept.id]);

    // No clean stop (no snapshot): a copy of the data directory as a crash leaves it (the live
    // server keeps its lock) starts by replaying the journal, both batches included.
    const crashed = `${dataDir}-crashed`;
    cpSync(dataDir, crashed, { recursive: true, filter: (source) => !source.endsWith('.lock') });
    second = await createRuntime({ ...config, dataDir: crashed }, { clock });
    await second.start();
    assert.deepEqual(await second.vodStats.store.ownerIds(), [kept.id]);
    assert.equal((await second.vodStats.store.get(kept.id, 'a1'))?.stats.new, 1);
  } finally {
    await second?.close();
    await first.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(`${dataDir}-crashed`, { recursive: true, force: true });
  }
});
