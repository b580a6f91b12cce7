import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { testEngines, type TestStorage } from '../../../test/helpers/engines.js';
import type { LiveStatus } from './live-status.js';
import { SlicerRepository } from './managed-slicers.repository.js';
import { SlicerHostRepository } from './slicer-hosts.repository.js';
import { SlicerTaskQueue } from './task-queue.repository.js';
import { sealedTestKey } from './slicer-fixtures.test-support.js';

const T0 = Date.UTC(2026, 10, 21, 10, 0, 0);
const status: LiveStatus = { state: 'live', failureReason: null, inputKbps: 900, lastFrameAt: T0, restarts: 1 };

for (const engine of await testEngines()) {
  describe(`slicer host leases on ${engine.engine}`, { skip: engine.skip }, () => {
    let s: TestStorage;
    let hosts: SlicerHostRepository;
    let slicers: SlicerRepository;

    /** A slicer whose CREATE completed (state running), as the runner leaves it. */
    const runningSlicer = async (id: string): Promise<void> => {
      await slicers.createSlicer({ id, workspaceId: 'ws', config: { name: id, region: 'eu-central-1', ingest_protocol: 'srt', output_profile: 'passthrough' }, createdAt: T0, sealedStreamKey: sealedTestKey() }, { id: `00000000-0000-4000-8000-${id.padStart(12, '0')}`, operation: 'CREATE', createdAt: T0 });
      const queue = new SlicerTaskQueue(s.storage.db, s.storage.engine);
      const task = await queue.claimNextTask({ owner: 'runner', now: T0, leaseMs: 1000 });
      assert.ok(task);
      assert.ok(await queue.finishTask({ taskId: task.id, fence: { owner: 'runner', attempt: task.attempts }, state: 'COMPLETED', failureReason: null, ingestUrl: `srt://a:1`, now: T0 }));
    };

    before(async () => {
      s = await engine.open();
      await s.storage.db.insertInto('workspaces').values({ id: 'ws', name: 'ws', created_at: T0 }).execute();
      hosts = new SlicerHostRepository(s.storage.db);
      slicers = new SlicerRepository(s.storage.db, s.storage.engine);
    });
    after(() => s.cleanup());

    test('a running slicer without a host is an orphan; one instance wins the takeover; the status it renews is on the slicer', async () => {
      await runningSlicer('1');
      assert.deepEqual((await hosts.orphans(T0, 10)).map((r) => r.id), ['1']);
      assert.equal(await hosts.takeOver('1', 'A', T0, T0 + 3000), true);
      assert.equal(await hosts.takeOver('1', 'B', T0 + 1, T0 + 3001), false, 'A holds it');
      assert.deepEqual(await hosts.orphans(T0 + 1, 10), []);
      assert.equal(await hosts.renew('1', 'A', T0 + 4000, status), true);
      const found = await slicers.findSlicer('ws', '1');
      assert.deepEqual(found?.slicer.hosted, { owner: 'A', expiresAt: T0 + 4000, status });
      await hosts.setIngestUrl('1', 'B', 'srt://b:1');
      assert.equal((await slicers.findSlicer('ws', '1'))?.slicer.ingestUrl, 'srt://a:1', 'only the host records the URL');
    });

    test('an expired lease is taken over; the old host cannot renew; take moves a slicer whoever holds it; expireAll frees every lease', async () => {
      assert.deepEqual((await hosts.orphans(T0 + 4000, 10)).map((r) => r.id), ['1'], 'expired at its end');
      assert.equal(await hosts.takeOver('1', 'B', T0 + 4000, T0 + 7000), true);
      assert.equal(await hosts.renew('1', 'A', T0 + 8000, status), false);
      await hosts.setIngestUrl('1', 'B', 'srt://b:1');
      assert.equal((await slicers.findSlicer('ws', '1'))?.slicer.ingestUrl, 'srt://b:1');
      assert.equal(await hosts.take('1', 'A', T0 + 9000), true);
      assert.equal(await hosts.renew('1', 'B', T0 + 9000, undefined), false);
      await hosts.expireAll(T0 + 5000);
      assert.deepEqual((await hosts.orphans(T0 + 5000, 10)).map((r) => r.id), ['1']);
      await hosts.release('1', 'A');
      assert.equal((await slicers.findSlicer('ws', '1'))?.slicer.hosted, undefined);
      assert.equal(await hosts.take('gone', 'A', T0), false);
    });
  });
}
