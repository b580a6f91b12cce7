import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../../src/platform/clock.js';
import { ConfigError, loadConfig } from '../../src/platform/config.js';
import { sequentialIds } from '../../src/platform/ids.js';
import { createRuntime } from '../../src/runtime.js';
import { startServer } from '../../src/server.js';
import { testEngines, type TestStorage } from '../helpers/engines.js';

const keyA = Buffer.alloc(32, 0xa1).toString('base64');
const keyB = Buffer.alloc(32, 0xb2).toString('base64');
const namesTheSetting = (err: unknown) => err instanceof ConfigError && /PLAYLINE_SECRET_KEY/.test(err.message);

for (const engine of await testEngines()) {
  describe(`the database is bound to its secret key, on ${engine.engine}`, { skip: engine.skip }, () => {
    let s: TestStorage;
    before(async () => {
      s = await engine.open();
    });
    after(() => s.cleanup());

    // Two instances of one deployment: same storage, each with its own configured key.
    const instance = (secretKey: string) =>
      createRuntime(loadConfig({ PLAYLINE_DATA_DIR: s.dataDir, PLAYLINE_SECRET_KEY: secretKey, PLAYLINE_LOG_LEVEL: 'silent' }), {
        storage: s.storage,
        clock: new FakeClock(),
        ids: sequentialIds(),
      });

    test('the first start records a check value (never the key); the same key starts again, another key refuses to start', async () => {
      const first = await instance(keyA);
      const workspace = await first.workspaces.createWorkspace('bound');
      await first.workspaces.createKey(workspace.id);
      await first.close();
      const rows = await s.storage.db.selectFrom('deployment_checks').selectAll().execute();
      assert.equal(rows.length, 1);
      assert.equal(rows[0]?.name, 'secret_key_check');
      assert.ok(!rows[0]?.value.includes(keyA) && !rows[0]?.value.includes(Buffer.from(keyA, 'base64').toString('hex')), 'the key itself is not stored');

      const again = await instance(keyA);
      await again.close();
      await assert.rejects(instance(keyB), namesTheSetting);
    });

    test('a database from before the check is bound on its next start, if its sealed keys open with the key given', async () => {
      await s.storage.db.deleteFrom('deployment_checks').execute();
      await assert.rejects(instance(keyB), namesTheSetting);
      const rightKey = await instance(keyA);
      await rightKey.close();
      await assert.rejects(instance(keyB), namesTheSetting);
    });
  });
}

describe('playline serve with another secret key', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'playline-key-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));
  const config = (secretKey?: string) =>
    loadConfig({ PLAYLINE_DATA_DIR: dataDir, PLAYLINE_PORT: '0', PLAYLINE_LOG_LEVEL: 'silent', ...(secretKey ? { PLAYLINE_SECRET_KEY: secretKey } : {}) });

  test('refuses to start, naming PLAYLINE_SECRET_KEY, where it would have answered every signed request with a 500', async () => {
    const first = await startServer(config(), { print: () => undefined });
    await first.close();
    // (Should it start after all, it is closed again so that the failure is reported, not a hang.)
    const wrongKey = startServer(config(keyB), { print: () => undefined }).then(async (server) => server.close());
    await assert.rejects(wrongKey, namesTheSetting);
    const again = await startServer(config(), { print: () => undefined });
    await again.close();
  });
});
