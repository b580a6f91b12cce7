import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../platform/clock.js';
import { sequentialIds } from '../../platform/ids.js';
import { SecretBox } from '../../platform/secret-box.js';
import { testEngines, type TestStorage } from '../../../test/helpers/engines.js';
import { IngestGrantService } from './ingest-grants.service.js';
import { WorkspaceService } from './workspaces.service.js';

for (const engine of await testEngines()) {
  describe(`ingest grants on ${engine.engine}`, { skip: engine.skip }, () => {
    let s: TestStorage;
    let workspaces: WorkspaceService;
    const clock = new FakeClock();
    before(async () => {
      s = await engine.open();
      workspaces = new WorkspaceService({ db: s.storage.db, box: new SecretBox(Buffer.alloc(32, 1)), clock, ids: sequentialIds() });
    });
    after(() => s.cleanup());

    test('grant, list, revoke; both workspaces must exist; granting twice changes nothing', async () => {
      const grants = new IngestGrantService({ db: s.storage.db, clock });
      const customer = await workspaces.createWorkspace('customer');
      const server = await workspaces.createWorkspace('playback server');
      const other = await workspaces.createWorkspace('other server');
      const first = await grants.grant(customer.id, server.id);
      assert.deepEqual(first, { created: true, grant: { workspaceId: customer.id, granteeId: server.id, createdAt: clock.now() } });
      clock.advance(5);
      assert.deepEqual(await grants.grant(customer.id, server.id), { created: false, grant: first.grant });
      await grants.grant(customer.id, other.id);
      assert.deepEqual((await grants.list(customer.id)).map((g) => g.granteeId), [server.id, other.id]);
      assert.deepEqual(await grants.list(server.id), []);
      await assert.rejects(grants.grant(customer.id, 'missing'), { code: 'not_found' });
      await assert.rejects(grants.grant('missing', server.id), { code: 'not_found' });
      await assert.rejects(grants.list('missing'), { code: 'not_found' });
      await assert.rejects(grants.grant(server.id, server.id), { code: 'unprocessable' });
      assert.deepEqual(await grants.revoke(customer.id, other.id), { workspaceId: customer.id, granteeId: other.id, createdAt: clock.now() });
      await assert.rejects(grants.revoke(customer.id, other.id), { code: 'not_found' });
      assert.deepEqual((await grants.list(customer.id)).map((g) => g.granteeId), [server.id]);
    });

    test('an ingest key may submit for its workspace and the granting ones; changes by another process show within the cache time', async () => {
      const here = new IngestGrantService({ db: s.storage.db, clock });
      const elsewhere = new IngestGrantService({ db: s.storage.db, clock }); // the CLI, another instance
      const a = await workspaces.createWorkspace('a');
      const b = await workspaces.createWorkspace('b');
      const server = await workspaces.createWorkspace('server');
      assert.deepEqual([...(await here.allowedOwners(server.id))], [server.id]);
      await here.grant(a.id, server.id);
      assert.deepEqual([...(await here.allowedOwners(server.id))].sort(), [a.id, server.id].sort(), 'a change made here shows at once');
      await elsewhere.grant(b.id, server.id);
      assert.equal((await here.allowedOwners(server.id)).has(b.id), false, 'cached');
      clock.advance(1000);
      assert.equal((await here.allowedOwners(server.id)).has(b.id), true, 'read again after a second');
      await elsewhere.revoke(a.id, server.id);
      clock.advance(1000);
      assert.equal((await here.allowedOwners(server.id)).has(a.id), false);
      assert.deepEqual([...(await here.existing([a.id, 'nope', server.id]))].sort(), [a.id, server.id].sort());
    });
  });
}
