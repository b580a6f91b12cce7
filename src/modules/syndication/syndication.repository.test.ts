import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { SecretBox } from '../../platform/secret-box.js';
import { testEngines, type TestStorage } from '../../../test/helpers/engines.js';
import * as repo from './syndication.repository.js';
import { syndicationMigration } from './syndication.migration.js';
import type { SyndicationTables } from './syndication.tables.js';
import { openTarget, sealTarget } from './target-secrets.js';

const box = new SecretBox(randomBytes(32));
const SECRET = 'pw-CLEARTEXT-repo';

for (const engine of await testEngines()) {
  describe(`syndication repository on ${engine.engine}`, { skip: engine.skip }, () => {
    let s: TestStorage;
    let db: repo.SyndicationDb;
    before(async () => {
      s = await engine.open();
      const tables = await s.storage.db.introspection.getTables();
      // Until the migration index registers 0300_syndication, create the tables here.
      if (!tables.some((t) => t.name === 'syndication_targets')) await syndicationMigration.up(s.storage.db);
      db = s.storage.db.withTables<SyndicationTables>();
      for (const id of ['ws-a', 'ws-b']) await db.insertInto('workspaces').values({ id, name: id, created_at: 1 }).execute();
    });
    after(() => s.cleanup());

    const target = sealTarget(
      { platform: 'Pluto TV', target_protocol: 'zixi', platform_config: { host: 'h.example', port: 2088, password: SECRET, stream_id: 'sid' } },
      box,
    );
    const schedule = (id: string, targetId: string, status: string): repo.ScheduleRow => ({
      id, workspace_id: 'ws-a', target_id: targetId, content_id: 'c', content_type: 'c', region: 'r',
      scte35_enabled: 0, source_url_params: '', status, error: null, created_at: 1, updated_at: 1,
    });

    test('targets round-trip sealed, scoped by workspace, with schedule counts', async () => {
      await repo.insertTarget(db, 't1', 'ws-a', target, 10);
      const found = await repo.findTarget(db, 'ws-a', 't1');
      assert.ok(found);
      assert.equal(openTarget(found.target, box).platform_config?.password, SECRET);
      assert.deepEqual(found.counts, { active: 0, error: 0 });
      assert.equal(await repo.findTarget(db, 'ws-b', 't1'), undefined);
      const raw = await db.selectFrom('syndication_targets').selectAll().execute();
      assert.ok(!JSON.stringify(raw).includes(SECRET), 'the raw row holds the secret in clear');

      await repo.insertSchedule(db, schedule('s1', 't1', 'active'));
      await repo.insertSchedule(db, schedule('s2', 't1', 'error'));
      await repo.insertSchedule(db, schedule('s3', 't1', 'stopped'));
      const [listed] = await repo.listTargets(db, 'ws-a');
      assert.deepEqual(listed?.counts, { active: 1, error: 1 });
      assert.deepEqual(await repo.listTargets(db, 'ws-b'), []);
    });

    test('updates are scoped and schedule updates compare-and-set on status', async () => {
      assert.equal(await repo.updateTarget(db, 'ws-b', 't1', target, null, 20), false);
      assert.equal(await repo.updateTarget(db, 'ws-a', 't1', { ...target, description: 'renamed' }, null, 20), true);
      assert.equal((await repo.findTarget(db, 'ws-a', 't1'))?.target.description, 'renamed');
      assert.equal(await repo.updateSchedule(db, 'ws-a', 's3', 'active', { status: 'stopped' }), false);
      assert.equal(await repo.updateSchedule(db, 'ws-a', 's3', 'stopped', { status: 'active' }), true);
      assert.equal(await repo.updateSchedule(db, 'ws-a', 's3', 'active', { status: 'stopped' }), true);
    });

    test('a target with an active schedule is not deleted; without one it goes with its schedules', async () => {
      assert.equal(await repo.deleteTargetUnlessActive(db, 'ws-a', 't1'), 0);
      assert.equal(await repo.deleteScheduleUnlessActive(db, 'ws-a', 's1'), 0);
      await repo.updateSchedule(db, 'ws-a', 's1', 'active', { status: 'stopped' });
      assert.equal(await repo.deleteTargetUnlessActive(db, 'ws-b', 't1'), 0);
      assert.equal(await repo.deleteTargetUnlessActive(db, 'ws-a', 't1'), 1);
      assert.deepEqual(await repo.listSchedules(db, 'ws-a'), []);
    });
  });
}
