import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { AppError } from '../../platform/errors.js';
import { ManagedSlicerSchema, ManagedSlicerTaskCollection, SlicerCreateBody, SlicerUpdateBody } from './managed-slicers.schema.js';
import { slicerView, taskCollectionView, taskView } from './managed-slicers.view.js';
import { ManualProvisioner, slicerBody, slicerWorld, until } from './slicer-fixtures.test-support.js';

const W = 'ws-1';
const OTHER = 'ws-2';

const rejects = (promise: Promise<unknown>, code: string) =>
  assert.rejects(promise, (err: unknown) => err instanceof AppError && err.code === code);

const world = () => slicerWorld({ provisioner: new ManualProvisioner() });

test('create answers at once with the slicer and its PENDING CREATE task', async () => {
  const { service, clock } = world();
  const created = await service.create(W, slicerBody());
  const view = slicerView(created);
  assert.ok(TypeCompiler.Compile(ManagedSlicerSchema).Check(view));
  assert.equal(view['@id'], `/api/v4/managed-slicer/slicers/${created.slicer.id}`);
  assert.equal(view.state, 'provisioning');
  assert.equal(view.ingest_url, null);
  assert.equal(view.task.operation, 'CREATE');
  assert.equal(view.task.state, 'PENDING');
  assert.equal(created.task.createdAt, clock.now());
});

test('a change answers with its task IN_PROGRESS when the runner takes it at once, else PENDING', async () => {
  const provisioner = new ManualProvisioner();
  const { service, runner } = slicerWorld({ provisioner, concurrency: 1 });
  await runner.start();
  const first = await service.create(W, slicerBody('first'));
  assert.equal(first.task.state, 'IN_PROGRESS');
  const second = await service.create(W, slicerBody('second'));
  assert.equal(second.task.state, 'PENDING', 'the only runner slot is busy');
  const restart = await service.restart(W, first.slicer.id);
  assert.equal(restart.task.state, 'PENDING', 'an earlier task of the slicer still runs');
  provisioner.open()[0]?.settle({ kind: 'succeeded', ingestUrl: 'rtmp://ok/live' });
  await until(() => provisioner.open().length === 1, 'the next task claimed');
  assert.equal((await service.getTask(W, second.task.id)).state, 'IN_PROGRESS');
  for (const call of provisioner.open()) call.settle({ kind: 'succeeded', ingestUrl: 'rtmp://ok/live' });
  await until(() => provisioner.open().length === 1, 'the restart claimed');
  assert.equal((await service.getTask(W, restart.task.id)).state, 'IN_PROGRESS');
  await runner.stop();
});

test('the body schemas hold the documented rules', () => {
  const create = TypeCompiler.Compile(SlicerCreateBody);
  const ok = slicerBody();
  assert.ok(create.Check(ok));
  assert.ok(!create.Check({ ...ok, name: '' }));
  assert.ok(!create.Check({ ...ok, name: '   ' }));
  assert.ok(!create.Check({ ...ok, name: 'a\u0007b' }));
  assert.ok(!create.Check({ ...ok, name: 'x'.repeat(101) }));
  assert.ok(create.Check({ ...ok, name: 'x'.repeat(100) }));
  assert.ok(!create.Check({ ...ok, ingest_protocol: 'webrtc' }));
  assert.ok(!create.Check({ ...ok, output_profile: '8k' }));
  assert.ok(!create.Check({ ...ok, extra: 1 }));
  const { region: _region, ...withoutRegion } = ok;
  assert.ok(!create.Check(withoutRegion));
  const update = TypeCompiler.Compile(SlicerUpdateBody);
  assert.ok(update.Check({ name: 'New' }));
  assert.ok(!update.Check({}));
  assert.ok(!update.Check({ colour: 'red' }));
});

test('the region must be one of the configured regions', async () => {
  const { service } = world();
  await assert.rejects(service.create(W, { ...slicerBody(), region: 'mars-north-1' }), (err: unknown) => {
    assert.ok(err instanceof AppError);
    assert.equal(err.code, 'validation_failed');
    assert.deepEqual(err.errors, [{ path: '/region', message: 'must be one of: us-east-1, eu-central-1' }]);
    return true;
  });
  const { slicer } = await service.create(W, slicerBody());
  await rejects(service.update(W, slicer.id, { region: 'nowhere-1' }), 'validation_failed');
});

test("another workspace's slicers and tasks are not found, and cannot be changed", async () => {
  const { service } = world();
  const { slicer, task } = await service.create(W, slicerBody());
  await rejects(service.get(OTHER, slicer.id), 'not_found');
  await rejects(service.update(OTHER, slicer.id, { name: 'x' }), 'not_found');
  await rejects(service.restart(OTHER, slicer.id), 'not_found');
  await rejects(service.delete(OTHER, slicer.id), 'not_found');
  await rejects(service.getTask(OTHER, task.id), 'not_found');
  assert.equal((await service.listTasks(OTHER, {})).total, 0);
  assert.equal((await service.listTasks(OTHER, { slicerId: slicer.id })).items.length, 0);
  assert.equal((await service.list(OTHER, {})).total, 0);
});

test('once a DELETE is queued, the slicer takes no further change', async () => {
  const { service } = world();
  const { slicer } = await service.create(W, slicerBody());
  const deleting = await service.delete(W, slicer.id);
  assert.equal(deleting.task.operation, 'DELETE');
  await rejects(service.update(W, slicer.id, { name: 'late' }), 'slicer_deletion_pending');
  await rejects(service.restart(W, slicer.id), 'slicer_deletion_pending');
  await rejects(service.delete(W, slicer.id), 'slicer_deletion_pending');
});

test('tasks list newest first, filter by state, operation and slicer, and page with a cursor', async () => {
  const { service, clock } = world();
  const one = await service.create(W, slicerBody('one'));
  clock.advance(1500);
  const two = await service.create(W, slicerBody('two'));
  await service.update(W, one.slicer.id, { name: 'one again' });
  await service.restart(W, two.slicer.id);
  await service.restart(W, one.slicer.id);
  await service.create(OTHER, slicerBody('foreign'));

  const all = await service.listTasks(W, {});
  assert.equal(all.total, 5);
  assert.deepEqual(all.items.map((t) => t.operation), ['RESTART', 'RESTART', 'UPDATE', 'CREATE', 'CREATE']);
  assert.equal(all.nextCursor, undefined);

  const restarts = await service.listTasks(W, { operation: 'RESTART' });
  assert.equal(restarts.total, 2);
  const ofOne = await service.listTasks(W, { slicerId: one.slicer.id });
  assert.deepEqual(ofOne.items.map((t) => t.operation), ['RESTART', 'UPDATE', 'CREATE']);
  assert.equal((await service.listTasks(W, { state: 'PENDING', operation: 'CREATE' })).total, 2);
  assert.equal((await service.listTasks(W, { state: 'COMPLETED' })).total, 0);

  const seen: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await service.listTasks(W, { limit: 2, cursor });
    assert.equal(page.total, 5, 'total covers every page');
    assert.ok(page.items.length <= 2);
    seen.push(...page.items.map((t) => t.id));
    cursor = page.nextCursor;
  } while (cursor);
  assert.deepEqual(seen, all.items.map((t) => t.id));

  const filteredPage = await service.listTasks(W, { slicerId: one.slicer.id, limit: 1 });
  assert.equal(filteredPage.total, 3);
  const rest = await service.listTasks(W, { slicerId: one.slicer.id, limit: 5, cursor: filteredPage.nextCursor });
  assert.deepEqual(rest.items.map((t) => t.operation), ['UPDATE', 'CREATE']);

  const afterCursor = await service.listTasks(W, { cursor: filteredPage.nextCursor });
  assert.deepEqual(afterCursor.items.map((t) => t.id), all.items.slice(1).map((t) => t.id), 'a cursor without limit: everything after it');
  assert.equal(afterCursor.nextCursor, undefined);

  await rejects(service.listTasks(W, { cursor: 'not-a-cursor' }), 'validation_failed');
  await rejects(service.listTasks(W, { cursor: Buffer.from('["x"]').toString('base64url') }), 'validation_failed');
});

test('without a limit the tasks list returns every task, however many (13.10)', async () => {
  const { service, clock } = world();
  const ids: string[] = [];
  for (let i = 0; i < 40; i++) {
    const { slicer, task } = await service.create(W, slicerBody(`s${i}`));
    clock.advance(1000);
    const restart = await service.restart(W, slicer.id);
    ids.push(task.id, restart.task.id);
  }
  const all = await service.listTasks(W, {});
  assert.equal(all.items.length, 80);
  assert.equal(all.total, 80);
  assert.equal(all.nextCursor, undefined);
  assert.deepEqual(all.items.map((t) => t.id), ids.reverse(), 'newest first');
  const page = await service.listTasks(W, { limit: 50 });
  assert.equal(page.items.length, 50);
  assert.ok(page.nextCursor, 'with a limit, still paged');
});

test('the task list view has exactly the spec shape', async () => {
  const { service, clock } = world();
  const { task } = await service.create(W, slicerBody());
  const page = await service.listTasks(W, {});
  const view = taskCollectionView('/api/v4/managed-slicer/slicers/tasks', page.items, page.total);
  assert.ok(TypeCompiler.Compile(ManagedSlicerTaskCollection).Check(view));
  assert.deepEqual(view, {
    '@id': '/api/v4/managed-slicer/slicers/tasks',
    '@type': 'Collection',
    items: [
      {
        '@id': `/api/v4/managed-slicer/slicers/tasks/${task.id}`,
        '@type': 'ManagedSlicerTask',
        id: task.id,
        operation: 'CREATE',
        state: 'PENDING',
        timestamp: Math.floor(clock.now() / 1000),
        slicer_id: task.slicerId,
      },
    ],
    total_items: 1,
  });
  assert.match(task.id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(taskView({ ...task, state: 'FAILED', failureReason: 'boom' }).failure_reason, 'boom');
});

test('slicers list newest first, without deleted ones, with cursor pages', async () => {
  const { service, clock } = world();
  const names = ['a', 'b', 'c'];
  for (const name of names) {
    await service.create(W, slicerBody(name));
    clock.advance(10);
  }
  const first = await service.list(W, { limit: 2 });
  assert.equal(first.total, 3);
  assert.deepEqual(first.items.map((s) => s.slicer.config.name), ['c', 'b']);
  const second = await service.list(W, { limit: 2, cursor: first.nextCursor });
  assert.deepEqual(second.items.map((s) => s.slicer.config.name), ['a']);
  assert.equal(second.nextCursor, undefined);
});
