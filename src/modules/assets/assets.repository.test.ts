import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { testEngines, type TestStorage } from '../../../test/helpers/engines.js';
import { AssetRepository, deleteWorkspaceAssets } from './assets.repository.js';

const T0 = Date.UTC(2026, 10, 21, 10, 0, 0);
const LEASE = 30_000;
const hex = (n: number) => n.toString(16).padStart(32, '0');

for (const engine of await testEngines()) {
  describe(`assets repository on ${engine.engine}`, { skip: engine.skip }, () => {
    let s: TestStorage;
    let repo: AssetRepository;
    let ws: string;
    let other: string;
    let n = 0;
    const newAsset = async (workspaceId = ws, createdAt = T0 + n) => repo.insertWithJob({ id: hex(++n), workspaceId, title: `clip ${n}`, sizeBytes: 1000 + n, createdAt });

    before(async () => {
      s = await engine.open();
      repo = new AssetRepository(s.storage.db);
      ws = 'a'.repeat(32);
      other = 'b'.repeat(32);
      await s.storage.db.insertInto('workspaces').values([{ id: ws, name: 'A', created_at: T0 }, { id: other, name: 'B', created_at: T0 }]).execute();
    });
    after(() => s.cleanup());

    test('insert, find, title change and delete stay within the workspace', async () => {
      const asset = await newAsset();
      assert.equal(asset.state, 'uploaded');
      assert.equal(asset.progress, 0);
      assert.deepEqual(asset.renditions, []);
      assert.equal((await repo.find(ws, asset.id))?.title, asset.title);
      assert.equal(await repo.find(other, asset.id), undefined);
      assert.equal(await repo.updateTitle(other, asset.id, 'stolen', T0 + 5), undefined);
      assert.equal((await repo.updateTitle(ws, asset.id, 'Renamed', T0 + 5))?.title, 'Renamed');
      assert.equal(await repo.delete(other, asset.id), false);
      assert.equal(await repo.delete(ws, asset.id), true);
      assert.equal(await repo.find(ws, asset.id), undefined);
      assert.equal(await repo.delete(ws, asset.id), false);
    });

    test('lists newest first in pages, with the total and a state filter', async () => {
      const created = [await newAsset(ws, T0 + 100), await newAsset(ws, T0 + 100), await newAsset(ws, T0 + 200)];
      const foreign = await newAsset(other, T0 + 300);
      const first = await repo.list(ws, {}, 2);
      assert.equal(first.total, 3);
      assert.deepEqual(first.items.map((a) => a.id), [created[2]?.id, created[1]?.id]);
      const last = first.items.at(-1);
      assert.ok(last);
      const second = await repo.list(ws, {}, 2, { createdAt: last.createdAt, id: last.id });
      assert.deepEqual(second.items.map((a) => a.id), [created[0]?.id]);
      assert.equal((await repo.list(ws, { state: 'ready' }, 10)).total, 0);
      assert.equal((await repo.list(ws, { state: 'uploaded' }, 10)).total, 3);
      assert.equal((await repo.list(ws, {}, undefined)).items.length, 3, 'no limit: every one');
      for (const a of created) await repo.delete(ws, a.id);
      await repo.delete(other, foreign.id);
    });

    test('a claim takes the oldest job once, marks the asset processing, and only its fence finishes it', async () => {
      const first = await newAsset(ws, T0 - 10_000);
      const second = await newAsset(ws, T0 - 5_000);
      const claimed = await repo.claimNext({ owner: 'i1', now: T0, leaseMs: LEASE });
      assert.deepEqual(claimed, { assetId: first.id, workspaceId: ws, attempts: 1 });
      assert.equal((await repo.find(ws, first.id))?.state, 'processing');
      const next = await repo.claimNext({ owner: 'i2', now: T0, leaseMs: LEASE });
      assert.equal(next?.assetId, second.id, 'a held job is not handed out twice');

      const fence = { owner: 'i1', attempt: 1 };
      assert.equal(await repo.setProgress(first.id, fence, 40, T0 + 1), true);
      assert.equal(await repo.setProgress(first.id, { owner: 'i2', attempt: 1 }, 90, T0 + 1), false);
      assert.equal((await repo.find(ws, first.id))?.progress, 40);
      assert.equal(await repo.renewLease(first.id, fence, T0 + 2 * LEASE), true);
      assert.equal(await repo.finishReady(first.id, { owner: 'i1', attempt: 2 }, { durationMs: 1, renditions: [] }, T0), false);
      const renditions = [{ name: '180p', width: 320, height: 180, bandwidth: 250_000 }];
      assert.equal(await repo.finishReady(first.id, fence, { durationMs: 4_000, renditions }, T0 + 3), true);
      const ready = await repo.find(ws, first.id);
      assert.equal(ready?.state, 'ready');
      assert.equal(ready?.progress, 100);
      assert.equal(ready?.durationMs, 4_000);
      assert.deepEqual(ready?.renditions, renditions);
      assert.equal(await repo.finishFailed(first.id, fence, 'again', T0 + 4), false, 'the job is gone once finished');

      assert.equal(await repo.finishFailed(second.id, { owner: 'i2', attempt: 1 }, 'no video stream', T0 + 5), true);
      const failed = await repo.find(ws, second.id);
      assert.equal(failed?.state, 'failed');
      assert.equal(failed?.failureReason, 'no video stream');
      await repo.delete(ws, first.id);
      await repo.delete(ws, second.id);
    });

    test('an expired lease is taken over with a new fence; the old holder can no longer write', async () => {
      const asset = await newAsset();
      const firstClaim = await repo.claimNext({ owner: 'dead', now: T0, leaseMs: LEASE });
      assert.equal(firstClaim?.assetId, asset.id);
      assert.equal(await repo.claimNext({ owner: 'i2', now: T0 + LEASE - 1, leaseMs: LEASE }), undefined);
      const takeover = await repo.claimNext({ owner: 'i2', now: T0 + LEASE, leaseMs: LEASE });
      assert.deepEqual(takeover, { assetId: asset.id, workspaceId: ws, attempts: 2 });
      assert.equal(await repo.renewLease(asset.id, { owner: 'dead', attempt: 1 }, T0 + 3 * LEASE), false);
      assert.equal(await repo.finishFailed(asset.id, { owner: 'dead', attempt: 1 }, 'late', T0), false);
      assert.equal(await repo.releaseLease(asset.id, { owner: 'i2', attempt: 2 }, T0 + LEASE + 1), true);
      const released = await repo.find(ws, asset.id);
      assert.equal(released?.state, 'uploaded', 'back in the queue');
      assert.equal((await repo.claimNext({ owner: 'i3', now: T0 + LEASE + 2, leaseMs: LEASE }))?.attempts, 3);
      await repo.delete(ws, asset.id);
    });

    test('playable while packaged: only the fence holding the job writes it; progress goes on; a takeover, a release or an embedded restart leaves nothing playable; ready ends it', async () => {
      const asset = await newAsset();
      await repo.claimNext({ owner: 'dead', now: T0, leaseMs: LEASE });
      const so = { durationMs: 8000, renditions: [{ name: '720p', width: 1280, height: 720, bandwidth: 3_000_000 }] };
      assert.equal(await repo.setPlayable(asset.id, { owner: 'dead', attempt: 1 }, so, T0 + 1), true);
      assert.equal(await repo.setProgress(asset.id, { owner: 'dead', attempt: 1 }, 40, T0 + 2), true, 'progress of a playable asset');
      const playable = await repo.find(ws, asset.id);
      assert.deepEqual([playable?.state, playable?.durationMs, playable?.renditions, playable?.progress], ['playable', 8000, so.renditions, 40]);
      assert.equal((await repo.counts(T0 + 3)).byState.playable, 1);
      assert.equal((await repo.list(ws, { state: 'playable' }, undefined)).total, 1);
      // Taken over from a dead instance: the new attempt starts from nothing.
      await repo.claimNext({ owner: 'i2', now: T0 + LEASE, leaseMs: LEASE });
      assert.equal(await repo.setPlayable(asset.id, { owner: 'dead', attempt: 1 }, so, T0 + LEASE + 1), false, 'the old holder can no longer write');
      const taken = await repo.find(ws, asset.id);
      assert.deepEqual([taken?.state, taken?.durationMs, taken?.renditions], ['processing', null, []]);
      assert.equal(await repo.setPlayable(asset.id, { owner: 'i2', attempt: 2 }, so, T0 + LEASE + 2), true);
      assert.equal(await repo.releaseLease(asset.id, { owner: 'i2', attempt: 2 }, T0 + LEASE + 3), true);
      const released = await repo.find(ws, asset.id);
      assert.deepEqual([released?.state, released?.durationMs, released?.renditions], ['uploaded', null, []]);
      await repo.claimNext({ owner: 'i3', now: T0 + LEASE + 4, leaseMs: LEASE });
      assert.equal(await repo.setPlayable(asset.id, { owner: 'i3', attempt: 3 }, so, T0 + LEASE + 5), true);
      assert.equal(await repo.releaseLeases(T0 + LEASE + 6), 1);
      assert.equal((await repo.find(ws, asset.id))?.state, 'uploaded', 'an embedded restart hands a playable asset back too');
      await repo.claimNext({ owner: 'i4', now: T0 + LEASE + 7, leaseMs: LEASE });
      assert.equal(await repo.setPlayable(asset.id, { owner: 'i4', attempt: 4 }, so, T0 + LEASE + 8), true);
      assert.equal(await repo.finishReady(asset.id, { owner: 'i4', attempt: 4 }, { durationMs: 12_000, renditions: so.renditions }, T0 + LEASE + 9), true);
      const ready = await repo.find(ws, asset.id);
      assert.deepEqual([ready?.state, ready?.durationMs, ready?.progress], ['ready', 12_000, 100]);
      assert.equal(await repo.setPlayable(asset.id, { owner: 'i4', attempt: 4 }, so, T0 + LEASE + 10), false, 'never playable again once ready');
      await repo.delete(ws, asset.id);
    });

    test('releaseLeases hands every held job back at once (an embedded restart); counts see queue and states', async () => {
      const a = await newAsset();
      const b = await newAsset();
      await repo.claimNext({ owner: 'old', now: T0, leaseMs: LEASE });
      const counts = await repo.counts(T0 + 1);
      assert.equal(counts.jobsRunning, 1);
      assert.equal(counts.jobsQueued, 1);
      assert.equal(counts.byState.processing, 1);
      assert.equal(await repo.releaseLeases(T0 + 1), 1);
      assert.equal((await repo.counts(T0 + 1)).jobsQueued, 2);
      assert.equal((await repo.find(ws, a.id))?.state, 'uploaded');
      assert.equal(await repo.exists(b.id), true);
      assert.equal(await repo.delete(ws, b.id), true);
      assert.equal(await repo.exists(b.id), false);
      assert.equal(await repo.renewLease(b.id, { owner: 'old', attempt: 1 }, T0 + LEASE), false, 'a deleted asset loses its lease');
      await repo.delete(ws, a.id);
    });

    test('claims go round-robin across workspaces, FIFO within each: a workspace that queued first never holds another back (N7)', async () => {
      // Workspaces of their own: none had a claim yet.
      const [attacker, victim, third] = ['d', 'e', 'f'].map((c) => c.repeat(32)) as [string, string, string];
      await s.storage.db.insertInto('workspaces').values([attacker, victim, third].map((id) => ({ id, name: id.slice(0, 1), created_at: T0 }))).execute();
      // The attacker queues three uploads first; the victim queues two a little later.
      const a = [await newAsset(attacker, T0 + 1), await newAsset(attacker, T0 + 2), await newAsset(attacker, T0 + 3)];
      const b = [await newAsset(victim, T0 + 10), await newAsset(victim, T0 + 11)];
      const claim = async (i: number) => (await repo.claimNext({ owner: `i${i}`, now: T0 + 100, leaseMs: LEASE }))?.assetId;
      const order = [await claim(1), await claim(2)];
      // A workspace that never had a claim goes before those that had one, whenever it queued.
      const c = await newAsset(third, T0 + 50);
      for (let i = 3; i <= 6; i++) order.push(await claim(i));
      assert.deepEqual(order, [a[0]?.id, b[0]?.id, c.id, a[1]?.id, b[1]?.id, a[2]?.id]);
      assert.equal(await claim(7), undefined);
      // The turns of a deleted workspace go with its rows.
      await s.storage.db.transaction().execute((trx) => deleteWorkspaceAssets(trx, third));
      assert.equal((await s.storage.db.selectFrom('asset_claim_turns').select('turn').where('workspace_id', '=', third).execute()).length, 0);
      for (const asset of [...a, ...b]) if (asset) await repo.delete(asset.workspaceId, asset.id);
    });
  });
}
