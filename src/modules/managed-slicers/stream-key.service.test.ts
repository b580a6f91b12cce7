import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../platform/errors.js';
import { slicerView } from './managed-slicers.view.js';
import { ManualProvisioner, slicerBody, slicerWorld, until } from './slicer-fixtures.test-support.js';
import { STREAM_KEY_PATTERN } from './stream-key.js';

const W = 'ws-1';
const OTHER = 'ws-2';

const rejects = (promise: Promise<unknown>, code: string) =>
  assert.rejects(promise, (err: unknown) => err instanceof AppError && err.code === code);

test('each slicer gets its own key at create; its CREATE runs with it and the owner sees it in ingest_url', async () => {
  const provisioner = new ManualProvisioner();
  const { service, runner, store } = slicerWorld({ provisioner });
  await runner.start();
  const one = await service.create(W, slicerBody('one'));
  const two = await service.create(W, slicerBody('two'));
  assert.match(one.streamKey, STREAM_KEY_PATTERN);
  assert.notEqual(one.streamKey, two.streamKey);
  assert.ok(!(await store.streamKeyOf(one.slicer.id))?.includes(one.streamKey), 'stored sealed');

  await until(() => provisioner.open().length === 2, 'both CREATE calls');
  const keysSent = Object.fromEntries(provisioner.open().map((c) => [c.request.slicerId, c.request.streamKey]));
  assert.deepEqual(keysSent, { [one.slicer.id]: one.streamKey, [two.slicer.id]: two.streamKey });
  for (const call of provisioner.open()) call.settle({ kind: 'succeeded', ingestUrl: 'rtmp://h:20001/live' });
  await until(() => store.allTasks().every((t) => t.state === 'COMPLETED'), 'created');
  assert.equal(slicerView(await service.get(W, one.slicer.id)).ingest_url, `rtmp://h:20001/live/${one.streamKey}`);
  assert.equal(store.allTasks().find((t) => t.slicerId === one.slicer.id)?.config.name, 'one', 'tasks hold the configuration, never the key');
  assert.ok(!JSON.stringify(store.allTasks()).includes(one.streamKey));
  await runner.stop();
});

test('a rotation stores a new key, and the slicer restarts with it; the old key is gone from every answer', async () => {
  const provisioner = new ManualProvisioner();
  const { service, runner, store } = slicerWorld({ provisioner });
  await runner.start();
  const created = await service.create(W, slicerBody());
  await until(() => provisioner.open().length === 1, 'CREATE');
  provisioner.open()[0]?.settle({ kind: 'succeeded', ingestUrl: 'srt://h:20000' });
  await until(() => store.allTasks().every((t) => t.state === 'COMPLETED'), 'created');

  const rotated = await service.rotateStreamKey(W, created.slicer.id);
  assert.match(rotated.streamKey, STREAM_KEY_PATTERN);
  assert.notEqual(rotated.streamKey, created.streamKey);
  assert.equal(rotated.task.operation, 'RESTART');
  assert.equal(slicerView(rotated).ingest_url, `srt://h:20000?passphrase=${rotated.streamKey}&pbkeylen=16`);
  await until(() => provisioner.open().length === 1, 'RESTART');
  const restart = provisioner.open()[0]?.request;
  assert.deepEqual([restart?.operation, restart?.streamKey], ['RESTART', rotated.streamKey]);
  provisioner.open()[0]?.settle({ kind: 'succeeded', ingestUrl: 'srt://h:20000' });

  const shown = [await service.get(W, created.slicer.id), ...(await service.list(W, {})).items];
  assert.ok(shown.every((s) => s.streamKey === rotated.streamKey));
  assert.ok(!JSON.stringify(shown.map((s) => slicerView(s))).includes(created.streamKey));
  await runner.stop();
});

test("a rotation of another workspace's slicer is not found, and one of a slicer being deleted is refused: neither changes the key", async () => {
  const { service, store } = slicerWorld({ provisioner: new ManualProvisioner() });
  const { slicer, streamKey } = await service.create(W, slicerBody());
  const sealed = await store.streamKeyOf(slicer.id);
  await rejects(service.rotateStreamKey(OTHER, slicer.id), 'not_found');
  await rejects(service.rotateStreamKey(W, 'no-such-slicer'), 'not_found');
  await service.delete(W, slicer.id);
  await rejects(service.rotateStreamKey(W, slicer.id), 'slicer_deletion_pending');
  assert.equal(await store.streamKeyOf(slicer.id), sealed);
  assert.equal((await service.get(W, slicer.id)).streamKey, streamKey);
  assert.deepEqual(store.allTasks().map((t) => t.operation), ['CREATE', 'DELETE'], 'no RESTART enqueued');
});

test('a slicer made before stream keys gets one the first time it is shown, and its process runs with that one', async () => {
  const provisioner = new ManualProvisioner();
  const { service, runner, store } = slicerWorld({ provisioner });
  const { slicer, streamKey: before } = await service.create(W, slicerBody());
  store.forgetStreamKey(slicer.id);
  const shown = await service.get(W, slicer.id);
  assert.match(shown.streamKey, STREAM_KEY_PATTERN);
  assert.notEqual(shown.streamKey, before);
  assert.equal((await service.get(W, slicer.id)).streamKey, shown.streamKey, 'made once, then kept');
  await runner.start();
  await until(() => provisioner.open().length === 1, 'CREATE');
  assert.equal(provisioner.open()[0]?.request.streamKey, shown.streamKey);
  await runner.stop();
});

test('a slicer made before stream keys whose first need is its task: the runner makes it, the owner then sees the same', async () => {
  const provisioner = new ManualProvisioner();
  const { service, runner, store } = slicerWorld({ provisioner });
  const { slicer } = await service.create(W, slicerBody());
  store.forgetStreamKey(slicer.id);
  await runner.start();
  await until(() => provisioner.open().length === 1, 'CREATE');
  const sent = provisioner.open()[0]?.request.streamKey;
  assert.match(sent ?? '', STREAM_KEY_PATTERN);
  assert.equal((await service.get(W, slicer.id)).streamKey, sent);
  await runner.stop();
});
