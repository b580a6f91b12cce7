import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { testEngines, type TestStorage } from '../../../test/helpers/engines.js';
import { FakeClock } from '../../platform/clock.js';
import type { AppError } from '../../platform/errors.js';
import { sequentialIds } from '../../platform/ids.js';
import { SecretBox } from '../../platform/secret-box.js';
import { PlaybackCatalogService } from './playback-catalog.service.js';
import { StoredPlaybackDirectory } from './playback-directory.js';
import { deleteWorkspaceRows } from './playback-edge.repository.js';

const box = new SecretBox(Buffer.alloc(32, 3));

for (const engine of await testEngines()) {
  describe(`playback catalogue repository on ${engine.engine}`, { skip: engine.skip }, () => {
    let s: TestStorage;
    let catalog: PlaybackCatalogService;
    let directory: StoredPlaybackDirectory;
    const clock = new FakeClock();
    const owners = ['a'.repeat(32), 'b'.repeat(32)];
    let secrets = 0;
    before(async () => {
      s = await engine.open();
      for (const id of owners) await s.storage.db.insertInto('workspaces').values({ id, name: id.slice(0, 1), created_at: 1 }).execute();
      directory = new StoredPlaybackDirectory({ db: s.storage.db, box, clock, signingKeys: () => Promise.resolve([]) });
      catalog = new PlaybackCatalogService({
        db: s.storage.db, box, clock, ids: sequentialIds(), newSecret: () => `secret-${++secrets}`, onChange: (o) => directory.invalidate(o),
      });
    });
    after(() => s.cleanup());
    const [mine, theirs] = owners as [string, string];

    test('application keys: versions in order, secrets sealed at rest, revocation, deletion', async () => {
      const created = await catalog.createAppKey(mine, 'web');
      assert.equal(created.created.secret, 'secret-1');
      await assert.rejects(catalog.createAppKey(mine, 'web'), (e: AppError) => e.code === 'conflict');
      const v2 = await catalog.addAppKeyVersion(mine, 'web');
      assert.deepEqual(v2.versions.map((v) => v.version), [1, 2]);
      const rows = await s.storage.db.selectFrom('playback_app_keys').select('secret_sealed').execute();
      assert.ok(rows.every((r) => !r.secret_sealed.includes('secret-')), 'secrets are sealed');
      assert.deepEqual((await directory.appKey(mine, 'web')).map((v) => [v.version, v.secret.toString(), v.revoked]), [[1, 'secret-1', false], [2, 'secret-2', false]]);
      await catalog.revokeAppKeyVersion(mine, 'web', 1);
      assert.deepEqual((await directory.appKey(mine, 'web')).map((v) => v.revoked), [true, false], 'a local change shows at once');
      assert.deepEqual(await directory.appKey(theirs, 'web'), [], 'scoped by owner');
      await assert.rejects(catalog.addAppKeyVersion(theirs, 'web'), (e: AppError) => e.code === 'not_found');
      await catalog.deleteAppKey(mine, 'web');
      assert.deepEqual(await catalog.listAppKeys(mine), []);
    });

    test('ad configurations, DRM policies and private assets: upsert, list, scope, delete', async () => {
      const draft = await catalog.putAdConfig(mine, 'pre', { adServerUrl: null, adAssetIds: [], simulatedLatencyMs: 0, timeoutMs: 2000 });
      assert.equal(draft.adServerUrl, null);
      clock.advance(5);
      const ready = await catalog.putAdConfig(mine, 'pre', { adServerUrl: 'https://ads.example.com', adAssetIds: ['ad-a', 'ad-b'], simulatedLatencyMs: 20, timeoutMs: 900 });
      assert.deepEqual([ready.adAssetIds, ready.timeoutMs, ready.updatedAt - draft.createdAt], [['ad-a', 'ad-b'], 900, 5]);
      assert.equal((await directory.adConfig(mine, 'pre'))?.simulatedLatencyMs, 20);
      assert.equal(await directory.adConfig(theirs, 'pre'), undefined);

      await catalog.putDrmPolicy(mine, 'wv', 'widevine', { security_level: 1, hdcp: 'type1' });
      assert.deepEqual((await directory.drmPolicy(mine, 'wv'))?.settings, { security_level: 1, hdcp: 'type1' });
      assert.deepEqual((await catalog.listDrmPolicies(theirs)), []);

      const asset = await catalog.putPrivateAsset(mine, 'film', [theirs, theirs, mine]);
      assert.deepEqual(asset.sharedWith, [theirs], 'deduplicated, never the owner itself');
      assert.deepEqual((await directory.privateAsset(mine, 'film'))?.sharedWith, [theirs]);

      await catalog.deleteAdConfig(mine, 'pre');
      await catalog.deleteDrmPolicy(mine, 'wv');
      await catalog.deletePrivateAsset(mine, 'film');
      await assert.rejects(catalog.deletePrivateAsset(mine, 'film'), (e: AppError) => e.code === 'not_found');
      assert.equal(await directory.adConfig(mine, 'pre'), undefined);
    });

    test('shares: one way, cached by the directory, forgotten at once on a local change and within a second on another\'s; deleting a workspace removes those it gave and got', async () => {
      const third = 'c'.repeat(32);
      await s.storage.db.insertInto('workspaces').values({ id: third, name: 'c', created_at: 1 }).execute();
      assert.equal(await directory.sharesWith(mine, theirs), false, 'private by default');
      assert.deepEqual(await catalog.putShare(mine, theirs), { created: true, share: { owner: mine, granteeId: theirs, createdAt: clock.now() } });
      assert.equal((await catalog.putShare(mine, theirs)).created, false);
      assert.equal(await directory.sharesWith(mine, theirs), true, 'a local change shows at once');
      assert.equal(await directory.sharesWith(theirs, mine), false, 'one way');
      await assert.rejects(catalog.putShare(mine, mine), (e: AppError) => e.code === 'unprocessable');
      await assert.rejects(catalog.putShare(mine, 'z'.repeat(32)), (e: AppError) => e.code === 'not_found');

      // Another process (the CLI, another instance) removes it: this directory reads it again after its second.
      const elsewhere = new PlaybackCatalogService({ db: s.storage.db, box, clock, ids: sequentialIds() });
      await elsewhere.deleteShare(mine, theirs);
      assert.equal(await directory.sharesWith(mine, theirs), true, 'cached');
      clock.advance(1000);
      assert.equal(await directory.sharesWith(mine, theirs), false, 'read again after a second');
      await assert.rejects(catalog.deleteShare(mine, theirs), (e: AppError) => e.code === 'not_found');

      await catalog.putShare(mine, theirs);
      await catalog.putShare(theirs, mine);
      await catalog.putShare(theirs, third);
      assert.deepEqual((await catalog.listShares(theirs)).map((x) => x.granteeId), [mine, third]);
      assert.equal(await deleteWorkspaceRows(s.storage.db, mine), 2, 'the share it gave and the one it got');
      directory.invalidate(mine);
      assert.equal(await directory.sharesWith(theirs, mine), false);
      assert.deepEqual((await catalog.listShares(theirs)).map((x) => x.granteeId), [third], 'shares between others stay');
    });
  });
}
