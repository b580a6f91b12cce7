import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../platform/clock.js';
import { SimulatedSlicerProvisioner, cycleRandom, type SlicerProvisioner } from './provisioner.js';
import { ManualProvisioner, settle, slicerBody, slicerWorld, until } from './slicer-fixtures.test-support.js';

const W = 'ws-1';

test('create, update, restart and delete of one slicer run one at a time, in order, and all complete', async () => {
  const provisioner = new ManualProvisioner();
  const { store, runner, service } = slicerWorld({ provisioner, concurrency: 4 });
  await runner.start();
  const { slicer } = await service.create(W, slicerBody());
  await service.update(W, slicer.id, { output_profile: 'uhd-2160p' });
  await service.restart(W, slicer.id);
  await service.delete(W, slicer.id);

  const order: string[] = [];
  for (const expected of ['CREATE', 'UPDATE', 'RESTART', 'DELETE']) {
    await until(() => provisioner.open().length === 1, `${expected} call`);
    await settle();
    assert.equal(provisioner.open().length, 1, 'never two tasks of one slicer at once');
    const [call] = provisioner.open();
    assert.ok(call);
    order.push(call.request.operation);
    const states = store.allTasks().map((t) => t.state);
    const done = order.length - 1;
    assert.deepEqual(states, [...Array(done).fill('COMPLETED'), 'IN_PROGRESS', ...Array(3 - done).fill('PENDING')]);
    call.settle({ kind: 'succeeded', ingestUrl: call.request.operation === 'DELETE' ? null : `rtmp://x/${order.length}` });
  }
  await until(() => store.allTasks().every((t) => t.state === 'COMPLETED'), 'all completed');
  assert.deepEqual(order, ['CREATE', 'UPDATE', 'RESTART', 'DELETE']);
  assert.deepEqual(
    store.allTasks().map((t) => t.operation),
    ['CREATE', 'UPDATE', 'RESTART', 'DELETE'],
  );
  // UPDATE received the patched configuration.
  assert.equal(provisioner.calls[1]?.request.config.output_profile, 'uhd-2160p');
  assert.equal(await store.findSlicer(W, slicer.id), undefined, 'a deleted slicer is gone');
  await runner.stop();
});

test('with the simulated provisioner and a fake clock, each task completes after its duration, in order', async () => {
  const clock = new FakeClock();
  const provisioner = new SimulatedSlicerProvisioner({ clock, durationMs: 2000, failureRate: 0 });
  const { store, runner, service } = slicerWorld({ provisioner, clock });
  await runner.start();
  const { slicer } = await service.create(W, slicerBody());
  await service.update(W, slicer.id, { name: 'Renamed' });
  await service.restart(W, slicer.id);
  await service.delete(W, slicer.id);
  const started = clock.now();
  for (let step = 1; step <= 4; step++) {
    await settle();
    clock.advance(2000);
    await until(() => store.allTasks().filter((t) => t.state === 'COMPLETED').length === step, `step ${step}`);
  }
  const tasks = store.allTasks();
  assert.deepEqual(tasks.map((t) => `${t.operation}:${t.state}`), ['CREATE:COMPLETED', 'UPDATE:COMPLETED', 'RESTART:COMPLETED', 'DELETE:COMPLETED']);
  assert.deepEqual(tasks.map((t) => (t.finishedAt ?? 0) - started), [2000, 4000, 6000, 8000]);
  await runner.stop();
});

test('a failing provisioner yields FAILED with the reason; a later RESTART brings the slicer back', async () => {
  const provisioner = new ManualProvisioner();
  const { store, runner, service } = slicerWorld({ provisioner });
  await runner.start();
  const { slicer, task } = await service.create(W, slicerBody());
  await until(() => provisioner.open().length === 1);
  provisioner.open()[0]?.settle({ kind: 'failed', reason: 'no encoder capacity left in region eu-central-1' });
  await until(() => store.allTasks()[0]?.state === 'FAILED');
  const failed = await service.getTask(W, task.id);
  assert.equal(failed.failureReason, 'no encoder capacity left in region eu-central-1');
  assert.equal((await service.get(W, slicer.id)).slicer.state, 'failed');

  const restarted = await service.restart(W, slicer.id);
  assert.equal(restarted.slicer.state, 'restarting');
  await until(() => provisioner.open().length === 1);
  provisioner.open()[0]?.settle({ kind: 'succeeded', ingestUrl: 'rtmp://ok/live' });
  await until(() => store.allTasks()[1]?.state === 'COMPLETED');
  const after = await service.get(W, slicer.id);
  assert.equal(after.slicer.state, 'running');
  assert.equal(after.slicer.ingestUrl, 'rtmp://ok/live');
  await runner.stop();
});

test('simulated failures (rate 1) and a throwing provisioner both end FAILED with a reason', async () => {
  const clock = new FakeClock();
  const simulated = new SimulatedSlicerProvisioner({ clock, durationMs: 100, failureRate: 1, random: cycleRandom([0.5]) });
  const a = slicerWorld({ provisioner: simulated, clock });
  await a.runner.start();
  await a.service.create(W, slicerBody());
  await settle();
  a.clock.advance(100);
  await until(() => a.store.allTasks()[0]?.state === 'FAILED');
  assert.match(a.store.allTasks()[0]?.failureReason ?? '', /^CREATE failed \(simulated\): /);
  await a.runner.stop();

  const throwing: SlicerProvisioner = {
    create: () => Promise.reject(new Error('db password is hunter2')),
    update: () => Promise.reject(new Error('x')),
    restart: () => Promise.reject(new Error('x')),
    delete: () => Promise.reject(new Error('x')),
  };
  const b = slicerWorld({ provisioner: throwing });
  await b.runner.start();
  const { task } = await b.service.create(W, slicerBody());
  await until(() => b.store.allTasks()[0]?.state === 'FAILED');
  assert.equal(b.store.allTasks()[0]?.failureReason, `Internal provisioner error (task ${task.id})`, 'internals are not leaked');
  await b.runner.stop();
});

test('tasks of different slicers run concurrently up to the limit', async () => {
  const provisioner = new ManualProvisioner();
  const { runner, service } = slicerWorld({ provisioner, concurrency: 2 });
  await runner.start();
  for (const name of ['a', 'b', 'c']) await service.create(W, slicerBody(name));
  await until(() => provisioner.open().length === 2);
  await settle();
  assert.equal(provisioner.open().length, 2, 'the limit holds');
  assert.deepEqual(provisioner.open().map((c) => c.request.config.name), ['a', 'b']);
  provisioner.open()[0]?.settle({ kind: 'succeeded', ingestUrl: null });
  await until(() => provisioner.open().some((c) => c.request.config.name === 'c'));
  assert.equal(provisioner.open().length, 2);
  await runner.stop();
});
