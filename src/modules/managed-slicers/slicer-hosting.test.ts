import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { testEngines, type TestStorage } from '../../../test/helpers/engines.js';
import { FakeClock } from '../../platform/clock.js';
import type { FfmpegSlicerProvisioner, RunnableSlicer } from './ffmpeg-provisioner.js';
import { SlicerRepository } from './managed-slicers.repository.js';
import type { ProvisionOutcome } from './provisioner.js';
import { sealedTestKey, silentLog, streamKeysOf } from './slicer-fixtures.test-support.js';
import { SlicerHosting } from './slicer-hosting.js';
import { SlicerHostRepository } from './slicer-hosts.repository.js';
import type { RunnableSlicerKey } from './slicer-store.js';
import { STREAM_KEY_PATTERN } from './stream-key.js';
import { SlicerTaskQueue } from './task-queue.repository.js';

const T0 = Date.UTC(2026, 10, 21, 10, 0, 0);
const KEY = 'K'.repeat(32);

/** The part of the ffmpeg provisioner hosting calls when it takes slicers over: resume records what it is given. */
class ResumeRecorder {
  readonly resumed: (RunnableSlicer & Partial<RunnableSlicerKey>)[] = [];
  resume(slicer: RunnableSlicer): Promise<ProvisionOutcome> {
    this.resumed.push(slicer);
    return Promise.resolve({ kind: 'succeeded', ingestUrl: slicer.ingestUrl });
  }
  held = (): string[] => this.resumed.map((s) => s.slicerId);
  status = () => undefined;
  letGo = () => Promise.resolve();
}

for (const engine of await testEngines()) {
  describe(`slicers taken over by an instance on ${engine.engine}`, { skip: engine.skip }, () => {
    let s: TestStorage;
    before(async () => {
      s = await engine.open();
      await s.storage.db.insertInto('workspaces').values({ id: 'ws', name: 'ws', created_at: T0 }).execute();
    });
    after(() => s.cleanup());

    const runningSlicer = async (repository: SlicerRepository, id: string) => {
      await repository.createSlicer({ id, workspaceId: 'ws', config: { name: id, region: 'eu-central-1', ingest_protocol: 'srt', output_profile: 'passthrough' }, createdAt: T0, sealedStreamKey: sealedTestKey(KEY) }, { id: `00000000-0000-4000-8000-${id.padStart(12, '0')}`, operation: 'CREATE', createdAt: T0 });
      const queue = new SlicerTaskQueue(s.storage.db, s.storage.engine);
      const task = await queue.claimNextTask({ owner: 'runner', now: T0, leaseMs: 1000 });
      assert.ok(task && (await queue.finishTask({ taskId: task.id, fence: { owner: 'runner', attempt: task.attempts }, state: 'COMPLETED', failureReason: null, ingestUrl: 'srt://a:20000', now: T0 })));
    };

    test('a slicer started again here gets its stream key in clear; one made before keys gets a key, stored for the owner to see', async () => {
      const repository = new SlicerRepository(s.storage.db, s.storage.engine);
      await runningSlicer(repository, '1');
      await runningSlicer(repository, '2');
      await s.storage.db.updateTable('managed_slicers').set({ stream_key_sealed: null }).where('id', '=', '2').execute();
      const streamKeys = streamKeysOf(repository);
      const recorder = new ResumeRecorder();
      const hosting = new SlicerHosting({
        hosts: new SlicerHostRepository(s.storage.db),
        provisioner: recorder as unknown as FfmpegSlicerProvisioner,
        clock: new FakeClock(T0 + 10_000),
        log: silentLog,
        owner: 'node-a',
        streamKeyOf: (slicer) => streamKeys.keyOf(slicer),
        leaseMs: 3_000,
        exclusive: true,
      });
      await hosting.start();
      await hosting.stop();
      const byId = new Map(recorder.resumed.map((r) => [r.slicerId, r]));
      assert.equal(byId.get('1')?.streamKey, KEY);
      const made = byId.get('2')?.streamKey;
      assert.match(made ?? '', STREAM_KEY_PATTERN);
      assert.equal(await streamKeys.keyOfSlicer('2'), made, 'the made key is the stored one');
    });
  });
}
