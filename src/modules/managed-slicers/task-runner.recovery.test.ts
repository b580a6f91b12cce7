import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../platform/clock.js';
import { SimulatedSlicerProvisioner } from './provisioner.js';
import { InMemorySlicerStore } from './memory-slicer-store.test-support.js';
import { SlicerTaskRunner } from './task-runner.js';
import { ManualProvisioner, settle, silentLog, slicerBody, slicerWorld, streamKeysOf, until } from './slicer-fixtures.test-support.js';

const W = 'ws-1';

/** A slicer with its CREATE task left IN_PROGRESS by `owner`, as a process killed mid-task leaves it. */
async function crashedMidTask(owner: string) {
  const clock = new FakeClock();
  const store = new InMemorySlicerStore();
  const { service } = slicerWorld({ provisioner: new ManualProvisioner(), clock, store });
  const { slicer, task } = await service.create(W, slicerBody());
  const claimed = await store.claimNextTask({ owner, now: clock.now(), leaseMs: 30_000 });
  assert.equal(claimed?.id, task.id);
  return { clock, store, slicer, task };
}

interface RunnerChoice {
  exclusive?: boolean;
  maxAttempts?: number;
  pollMs?: number | null;
}

const runnerFor = (store: InMemorySlicerStore, clock: FakeClock, provisioner: ManualProvisioner, ownerId: string, choice: RunnerChoice = {}) =>
  new SlicerTaskRunner({ store, clock, provisioner, streamKeyOf: (id) => streamKeysOf(store).keyOfSlicer(id), log: silentLog, ownerId, leaseMs: 30_000, pollMs: 1_000, ...choice });

test('embedded (exclusive) runner: on start, a task the killed process left IN_PROGRESS is resumed at once', async () => {
  const { clock, store, slicer, task } = await crashedMidTask('old-process');
  const provisioner = new ManualProvisioner();
  const runner = runnerFor(store, clock, provisioner, 'new-process', { exclusive: true, pollMs: null });
  await runner.start();
  await until(() => provisioner.open().length === 1, 'resumed call');
  assert.equal(provisioner.open()[0]?.request.taskId, task.id, 'same task id: the provisioner sees an idempotent retry');
  provisioner.open()[0]?.settle({ kind: 'succeeded', ingestUrl: 'rtmp://resumed' });
  await until(() => store.allTasks()[0]?.state === 'COMPLETED');
  assert.equal(store.allTasks()[0]?.attempts, 2);
  assert.equal((await store.findSlicer(W, slicer.id))?.slicer.state, 'running');
  assert.equal(clock.pendingTimers(), 0, 'an idle embedded runner sets no timer');
  await runner.stop();
});

test("cluster runner: another instance's live lease is respected, and taken over once it expires", async () => {
  const { clock, store, task } = await crashedMidTask('node-2');
  const provisioner = new ManualProvisioner();
  const runner = runnerFor(store, clock, provisioner, 'node-1');
  await runner.start();
  for (let t = 0; t < 29; t++) {
    clock.advance(1_000);
    await settle();
  }
  assert.equal(provisioner.calls.length, 0, 'no takeover while the lease is valid');
  clock.advance(1_000);
  await until(() => provisioner.open().length === 1, 'takeover');
  assert.equal(provisioner.open()[0]?.request.taskId, task.id);
  assert.equal(store.allTasks()[0]?.leaseOwner, 'node-1');
  await runner.stop();
});

test('a task interrupted more than maxAttempts times is failed with a reason instead of resumed', async () => {
  const { clock, store, slicer, task } = await crashedMidTask('node-1');
  for (let i = 0; i < 2; i++) {
    await store.releaseLeases(clock.now(), 'node-1');
    await store.claimNextTask({ owner: 'node-1', now: clock.now(), leaseMs: 30_000 });
  }
  const provisioner = new ManualProvisioner();
  const runner = runnerFor(store, clock, provisioner, 'node-2', { exclusive: true, maxAttempts: 3 });
  await runner.start();
  await until(() => store.allTasks()[0]?.state === 'FAILED');
  assert.equal(provisioner.calls.length, 0);
  const failed = store.allTasks()[0];
  assert.equal(failed?.id, task.id);
  assert.match(failed?.failureReason ?? '', /^Interrupted 3 times while in progress/);
  assert.equal((await store.findSlicer(W, slicer.id))?.slicer.state, 'failed');
  await runner.stop();
});

test('stop() aborts the running call and releases its lease; the next start resumes it', async () => {
  const clock = new FakeClock();
  const provisioner = new ManualProvisioner();
  const { store, runner, service } = slicerWorld({ provisioner, clock });
  await runner.start();
  await service.create(W, slicerBody());
  await until(() => provisioner.open().length === 1);
  await runner.stop();
  assert.equal(provisioner.open().length, 0, 'the call was aborted');
  const left = store.allTasks()[0];
  assert.equal(left?.state, 'IN_PROGRESS');
  assert.ok((left?.leaseExpiresAt ?? Infinity) <= clock.now(), 'lease released');
  assert.equal(clock.pendingTimers(), 0, 'no timer left behind');

  const next = new ManualProvisioner();
  const other = runnerFor(store, clock, next, 'node-9');
  await other.start();
  await until(() => next.open().length === 1);
  next.open()[0]?.settle({ kind: 'succeeded', ingestUrl: null });
  await until(() => store.allTasks()[0]?.state === 'COMPLETED');
  await other.stop();
});

test('two instances on one store never run the same task: leases are renewed during long work', async () => {
  const clock = new FakeClock();
  const store = new InMemorySlicerStore();
  const provisioner = new SimulatedSlicerProvisioner({ clock, durationMs: 100_000, failureRate: 0 });
  const calls: string[] = [];
  const counting = {
    create: (r: Parameters<typeof provisioner.create>[0]) => (calls.push(`${r.taskId}`), provisioner.create(r)),
    update: provisioner.update.bind(provisioner),
    restart: provisioner.restart.bind(provisioner),
    delete: provisioner.delete.bind(provisioner),
  };
  const a = slicerWorld({ provisioner: counting, clock, store, ownerId: 'node-a', leaseMs: 3_000 });
  const b = slicerWorld({ provisioner: counting, clock, store, ownerId: 'node-b', leaseMs: 3_000 });
  await a.runner.start();
  await b.runner.start();
  await a.service.create(W, slicerBody('one'));
  await settle();
  for (let t = 0; t < 100; t++) {
    clock.advance(1_000);
    await settle();
  }
  await until(() => store.allTasks()[0]?.state === 'COMPLETED');
  assert.equal(calls.length, 1, 'exactly one instance provisioned the task');
  await a.runner.stop();
  await b.runner.stop();
});

test('a runner that lost its lease does not write its result (fencing)', async () => {
  const clock = new FakeClock();
  const first = new ManualProvisioner();
  const { store, runner, service } = slicerWorld({ provisioner: first, clock, ownerId: 'node-a', leaseMs: 3_000 });
  await runner.start();
  await service.create(W, slicerBody());
  await until(() => first.open().length === 1);
  // Simulate node-a stalling past its lease: node-b takes the task over.
  await store.releaseLeases(clock.now(), 'node-a');
  const second = new ManualProvisioner();
  const other = runnerFor(store, clock, second, 'node-b');
  await other.start();
  await until(() => second.open().length === 1);
  clock.advance(1_000); // node-a's renewal finds the lease gone and aborts its call
  await until(() => first.open().length === 0);
  second.open()[0]?.settle({ kind: 'failed', reason: 'from node-b' });
  await until(() => store.allTasks()[0]?.state === 'FAILED');
  assert.equal(store.allTasks()[0]?.failureReason, 'from node-b');
  assert.equal(store.allTasks()[0]?.attempts, 2);
  await runner.stop();
  await other.stop();
});
