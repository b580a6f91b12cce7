import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../platform/clock.js';
import { sequentialIds } from '../../platform/ids.js';
import { SecretBox } from '../../platform/secret-box.js';
import { testEngines, type TestStorage } from '../../../test/helpers/engines.js';
import * as repo from './workspaces.repository.js';
import { WorkspaceService } from './workspaces.service.js';

for (const engine of await testEngines()) {
  describe(`workspaces and keys on ${engine.engine}`, { skip: engine.skip }, () => {
    let s: TestStorage;
    let service: WorkspaceService;
    const clock = new FakeClock();
    before(async () => {
      s = await engine.open();
      service = new WorkspaceService({ db: s.storage.db, box: new SecretBox(Buffer.alloc(32, 1)), clock, ids: sequentialIds() });
    });
    after(() => s.cleanup());

    test('workspaces are created, found, counted and listed in creation order', async () => {
      const a = await service.createWorkspace('A');
      clock.advance(1);
      const b = await service.createWorkspace('B');
      assert.deepEqual(await service.getWorkspace(a.id), a);
      assert.equal(await service.countWorkspaces(), 2);
      assert.deepEqual((await service.listWorkspaces()).map((w) => w.name), ['A', 'B']);
      assert.equal(typeof (await repo.findWorkspace(s.storage.db, b.id))?.created_at, 'number');
      await assert.rejects(service.getWorkspace('missing'), { code: 'not_found' });
    });

    test('keys: several per workspace, secrets sealed at rest, revocable', async () => {
      const w = await service.createWorkspace('keys');
      const k1 = await service.createKey(w.id, { label: 'one' });
      const k2 = await service.createKey(w.id, { kind: 'ingest' });
      const rows = await repo.listApiKeys(s.storage.db, w.id);
      assert.equal(rows.length, 2);
      for (const row of rows) {
        assert.ok(!row.secret_sealed.includes(k1.secret) && !row.secret_sealed.includes(k2.secret), 'no clear secret in the row');
        assert.match(row.secret_sealed, /^v1:/);
      }
      const signing = await service.loadSigningKeys(w.id);
      assert.deepEqual(signing?.map((k) => k.secret.toString()), [k1.secret, k2.secret]);
      assert.deepEqual(signing?.map((k) => k.kind), ['api', 'ingest']);
      const revoked = await service.revokeKey(w.id, k1.id);
      assert.equal(revoked.revokedAt, clock.now());
      assert.equal((await service.loadSigningKeys(w.id))?.find((k) => k.id === k1.id)?.revoked, true);
      // revoking twice keeps the first revocation time
      clock.advance(10);
      assert.equal((await service.revokeKey(w.id, k1.id)).revokedAt, revoked.revokedAt);
      await assert.rejects(service.revokeKey('other', k2.id), { code: 'not_found' });
      assert.equal(await service.loadSigningKeys('missing'), null);
    });

    test("a key is found only within its own workspace", async () => {
      const w1 = await service.createWorkspace('one');
      const w2 = await service.createWorkspace('two');
      const key = await service.createKey(w1.id);
      assert.equal((await service.getKey(w1.id, key.id)).id, key.id);
      await assert.rejects(service.getKey(w2.id, key.id), { code: 'not_found' });
    });
  });
}
