import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { testEngines, type TestStorage } from '../../../test/helpers/engines.js';
import { FakeClock } from '../../platform/clock.js';
import { openStorage, type Storage } from '../../platform/db/database.js';
import { migrations } from '../../migrations.js';
import { randomIds } from '../../platform/ids.js';
import { ManagedSlicerService } from './managed-slicers.service.js';
import { SlicerRepository } from './managed-slicers.repository.js';
import { SlicerTaskQueue } from './task-queue.repository.js';
import { ManualProvisioner, regions, silentLog, slicerBody, streamKeysOf } from './slicer-fixtures.test-support.js';
import { SlicerTaskRunner } from './task-runner.js';
import { eventually } from '../../../test/helpers/eventually.js';

const W = 'ws-cluster';
const LEASE_MS = 30_000;

// Two instances = two connection pools on one PostgreSQL schema, each with its own clock.
const engine = (await testEngines()).find((e) => e.engine === 'postgres');

describe('managed slicer tasks across two instances on PostgreSQL', { skip: engine?.skip ?? 'no PostgreSQL case' }, () => {
  let s: TestStorage;
  let second: Storage;
  before(async () => {
    s = await (engine as NonNullable<typeof engine>).open();
    second = await openStorage({ databaseUrl: s.databaseUrl, dataDir: s.dataDir, pgSchema: s.pgSchema as string, migrations });
    await s.storage.db.insertInto('workspaces').values({ id: W, name: 'Cluster', created_at: 0 }).execute();
  });
  after(async () => {
    await second.close();
    await s.cleanup();
  });

  const instance = (name: string, storage: Storage, clock: FakeClock) => {
    const repository = new SlicerRepository(storage.db, storage.engine);
    const provisioner = new ManualProvisioner();
    const streamKeys = streamKeysOf(repository);
    const runner = new SlicerTaskRunner({ store: new SlicerTaskQueue(storage.db, storage.engine), provisioner, clock, streamKeyOf: (id) => streamKeys.keyOfSlicer(id), log: silentLog, ownerId: name, leaseMs: LEASE_MS, pollMs: 1_000 });
    const service = new ManagedSlicerService({ store: repository, streamKeys, clock, ids: randomIds, regions, onTaskEnqueued: () => runner.notify() });
    return { repository, provisioner, runner, service, clock };
  };

  test('racing instances claim every task exactly once', async () => {
    const clock = new FakeClock();
    const a = instance('node-a', s.storage, clock);
    const b = instance('node-b', second, clock);
    await Promise.all([a.runner.start(), b.runner.start()]);
    try {
      const created = await Promise.all(Array.from({ length: 12 }, (_, i) => a.service.create(W, slicerBody(`race ${i}`))));
      const done = new Set<string>();
      await eventually(() => {
        b.runner.notify(); // b's idle poll (a hears its own enqueues); no time passes, no lease expires
        for (const node of [a, b]) {
          for (const call of node.provisioner.open()) {
            call.settle({ kind: 'succeeded', ingestUrl: `rtmp://${node === a ? 'a' : 'b'}/${call.request.taskId}` });
            done.add(call.request.taskId);
          }
        }
        return done.size === created.length;
      }, 'every task carried out');
      const calls = [...a.provisioner.calls, ...b.provisioner.calls].map((c) => c.request.taskId);
      assert.equal(calls.length, created.length, 'no task was handed to both instances');
      assert.ok(a.provisioner.calls.length > 0 && b.provisioner.calls.length > 0, 'both instances worked');
      await eventually(async () => {
        const states = await Promise.all(created.map(({ task }) => a.repository.findTask(W, task.id)));
        return states.every((t) => t?.state === 'COMPLETED' && t.attempts === 1);
      }, 'every task COMPLETED after one claim');
    } finally {
      await Promise.all([a.runner.stop(), b.runner.stop()]);
    }
  });

  test('a task claimed by an instance that died is taken over once its lease expires, and only its new owner finishes it', async () => {
    const a = instance('node-a', s.storage, new FakeClock());
    const b = instance('node-b', second, new FakeClock(a.clock.now()));
    await a.runner.start();
    try {
      const { slicer, task } = await a.service.create(W, slicerBody('takeover'));
      await eventually(() => a.provisioner.open().length === 1, 'node-a working on the task');
      // node-a dies: its clock stops, so it never renews the lease again (a kill -9 leaves the same).
      await b.runner.start();
      // b's idle poll at each new time: the fake clock does not wait for a poll still running,
      // so a timer armed after the advance would only fire at the next one.
      const tick = (ms: number) => {
        b.clock.advance(ms);
        b.runner.notify();
      };
      for (let t = 0; t < 29; t++) {
        tick(1_000);
        await eventually(async () => (await b.repository.findTask(W, task.id))?.leaseOwner === 'node-a', 'lease kept');
      }
      assert.equal(b.provisioner.calls.length, 0, 'a live lease is respected');
      tick(2_000);
      await eventually(() => b.provisioner.open().length === 1, 'node-b takes the task over');
      assert.equal(b.provisioner.open()[0]?.request.taskId, task.id, 'the same task, resumed');
      b.provisioner.open()[0]?.settle({ kind: 'succeeded', ingestUrl: 'rtmp://node-b/live' });
      await eventually(async () => (await b.repository.findTask(W, task.id))?.state === 'COMPLETED', 'completed by node-b');
      const finished = await b.repository.findTask(W, task.id);
      assert.deepEqual([finished?.attempts, finished?.leaseOwner], [2, null]);
      // The zombie's late answer is fenced off: it cannot overwrite the result.
      a.provisioner.open()[0]?.settle({ kind: 'succeeded', ingestUrl: 'rtmp://node-a/zombie' });
      await eventually(() => a.runner.runningTaskIds().length === 0, 'node-a gave up');
      const view = await b.repository.findSlicer(W, slicer.id);
      assert.deepEqual([view?.slicer.state, view?.slicer.ingestUrl], ['running', 'rtmp://node-b/live']);
    } finally {
      await Promise.all([a.runner.stop(), b.runner.stop()]);
    }
  });
});
