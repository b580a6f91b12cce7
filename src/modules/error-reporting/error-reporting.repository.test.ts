import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { testEngines } from '../../../test/helpers/engines.js';
import type { TestStorage } from '../../../test/helpers/engines.js';
import { insertWorkspace } from '../workspaces/workspaces.repository.js';
import * as repo from './error-reporting.repository.js';

const row = (owner: string): repo.SettingsRow => ({
  workspace_id: owner,
  callback_url: null,
  enabled: 0,
  secret_sealed: 'v1:sealed',
  previous_secret_sealed: null,
  previous_secret_expires_at: null,
  revision: 1,
  updated_at: 1_763_719_200_000,
});

for (const engine of await testEngines()) {
  describe(`error reporting settings repository on ${engine.engine}`, { skip: engine.skip }, () => {
    let s: TestStorage;
    before(async () => {
      s = await engine.open();
      for (const id of ['ws-a', 'ws-b']) await insertWorkspace(s.storage.db, { id, name: id, created_at: 1 });
    });
    after(() => s.cleanup());

    test('a second insert for the same workspace is ignored, not an error', async () => {
      const { db } = s.storage;
      await repo.insertSettingsIfAbsent(db, row('ws-a'));
      await repo.insertSettingsIfAbsent(db, { ...row('ws-a'), secret_sealed: 'v1:other' });
      assert.equal((await repo.findSettings(db, 'ws-a'))?.secret_sealed, 'v1:sealed');
    });

    test('every change bumps the revision; times read back as numbers', async () => {
      const { db } = s.storage;
      await repo.updateCallback(db, 'ws-a', { callback_url: 'https://hooks.example.com/x', enabled: 1, updated_at: 1_763_719_300_000 });
      await repo.updateSecrets(db, 'ws-a', {
        secret_sealed: 'v1:new',
        previous_secret_sealed: 'v1:sealed',
        previous_secret_expires_at: 1_763_805_700_000,
        updated_at: 1_763_719_400_000,
      });
      const found = await repo.findSettings(db, 'ws-a');
      assert.equal(Number(found?.revision), 3);
      assert.equal(found?.callback_url, 'https://hooks.example.com/x');
      assert.equal(found?.previous_secret_expires_at, 1_763_805_700_000);
      assert.equal(found?.updated_at, 1_763_719_400_000);
    });

    test('revisions of every workspace, and rows by owner', async () => {
      const { db } = s.storage;
      await repo.insertSettingsIfAbsent(db, row('ws-b'));
      const revisions = (await repo.listRevisions(db)).map((r) => [r.workspace_id, Number(r.revision)]).sort();
      assert.deepEqual(revisions, [['ws-a', 3], ['ws-b', 1]]);
      assert.deepEqual((await repo.findSettingsOf(db, ['ws-b', 'ws-x'])).map((r) => r.workspace_id), ['ws-b']);
      assert.deepEqual(await repo.findSettingsOf(db, []), []);
    });
  });
}
