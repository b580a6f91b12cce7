import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../../../test/helpers/test-app.js';
import { FakeClock } from '../../platform/clock.js';
import type { IngestProtocol, ManagedSlicerView } from './managed-slicers.schema.js';
import { runAllTasks, slicerBody } from './slicer-fixtures.test-support.js';

const SLICERS = '/api/v4/managed-slicer/slicers';
const TASKS = `${SLICERS}/tasks`;
const K = '([A-Za-z0-9_-]{32})';
const HOST = 'eu-central-1\\.ingest\\.playline\\.invalid';

/** Where each protocol's ingest URL carries the key (simulated provisioner's hosts). */
const keyed: Record<Exclude<IngestProtocol, 'zixi'>, (slicer: ManagedSlicerView, owner: string) => RegExp> = {
  srt: () => new RegExp(`^srt://${HOST}:9000\\?passphrase=${K}&pbkeylen=16$`),
  rist: () => new RegExp(`^rist://${HOST}:9100\\?secret=${K}&aes-type=128$`),
  rtmp: () => new RegExp(`^rtmp://${HOST}:1935/live/${K}$`),
  hls: (s, owner) => new RegExp(`^https://${HOST}/ingest/hls/${owner}/${s.id}/${K}/index\\.m3u8$`),
};

describe('slicer stream keys over the API', () => {
  let t: TestApp;
  let clock: FakeClock;
  const logs: string[] = [];
  /** Every key an answer showed, old ones included: none may appear where it does not belong. */
  const seenKeys = new Set<string>();

  before(async () => {
    clock = new FakeClock();
    t = await createTestApp({
      clock,
      env: { PLAYLINE_SLICER_PROVISION_MS: '2000', PLAYLINE_REGIONS: 'eu-central-1', PLAYLINE_LOG_LEVEL: 'debug' },
      logDestination: { write: (line: string) => void logs.push(line) },
    });
  });
  after(() => t.close());

  const runTasks = (owner = t.workspace.id) => runAllTasks(t.runtime.managedSlicers, clock, owner);
  const keyOf = (slicer: ManagedSlicerView): string => {
    const pattern = keyed[slicer.ingest_protocol as keyof typeof keyed](slicer, t.workspace.id);
    const key = pattern.exec(slicer.ingest_url ?? '')?.[1];
    assert.ok(key, `${slicer.ingest_url} matches ${pattern}`);
    seenKeys.add(key);
    return key;
  };

  test('once provisioned, ingest_url carries the slicer\'s own key, the same in every answer to its workspace; stored sealed', async () => {
    const api = t.client.managedSlicers;
    const created = await api.create({ ...slicerBody('srt'), ingest_protocol: 'srt' });
    assert.equal(created.ingest_url, null, 'no URL before the CREATE task completed');
    await runTasks();
    const shown = await api.get(created.id);
    const key = keyOf(shown);
    assert.equal((await api.list()).page.items.find((s) => s.id === created.id)?.ingest_url, shown.ingest_url);
    const renamed = await api.update(created.id, { name: 'renamed' });
    assert.equal(renamed.ingest_url, shown.ingest_url);
    assert.equal((await api.restart(created.id)).ingest_url, shown.ingest_url);
    await runTasks();

    const row = await t.runtime.storage.db.selectFrom('managed_slicers').select(['ingest_url', 'stream_key_sealed']).where('id', '=', created.id).executeTakeFirstOrThrow();
    assert.equal(row.ingest_url, `srt://eu-central-1.ingest.playline.invalid:9000`, 'stored keyless');
    assert.ok(row.stream_key_sealed && !row.stream_key_sealed.includes(key), 'the key is stored sealed');
    assert.equal(t.runtime.box.open(row.stream_key_sealed), key);

    const keys = [key];
    for (const protocol of ['rist', 'rtmp', 'hls'] as const) {
      const slicer = await api.create({ ...slicerBody(protocol), ingest_protocol: protocol });
      await runTasks();
      keys.push(keyOf(await api.get(slicer.id)));
    }
    assert.equal(new Set(keys).size, keys.length, 'one key per slicer');
  });

  test('rotate-stream-key answers 202 with a new key and a RESTART task; the old key is in no answer any more', async () => {
    const api = t.client.managedSlicers;
    const slicer = await api.create({ ...slicerBody('rotated'), ingest_protocol: 'rtmp' });
    await runTasks();
    const oldKey = keyOf(await api.get(slicer.id));

    const response = await t.client.core.send('POST', `${SLICERS}/${slicer.id}/rotate-stream-key`);
    assert.equal(response.status, 202, response.body);
    const rotated = JSON.parse(response.body) as ManagedSlicerView;
    assert.equal(rotated['@id'], `${SLICERS}/${slicer.id}`);
    assert.equal(rotated.task.operation, 'RESTART');
    const newKey = keyOf(rotated);
    assert.notEqual(newKey, oldKey);
    await runTasks();
    assert.equal((await api.getTask(rotated.task.id)).state, 'COMPLETED');

    const answers = [
      await api.get(slicer.id),
      (await api.list()).page,
      await api.restart(slicer.id),
      await api.update(slicer.id, { description: 'after the rotation' }),
    ];
    await runTasks();
    assert.ok(answers.every((a) => !JSON.stringify(a).includes(oldKey)), 'the old key is gone');
    assert.ok(answers.every((a) => JSON.stringify(a).includes(newKey)));
    const viaSdk = await api.rotateStreamKey(slicer.id);
    assert.notEqual(keyOf(viaSdk), newKey, 'every rotation makes a new key');
    await runTasks();
  });

  test("another workspace: rotate is 404 and leaves the key; the owner's keys appear in none of its answers", async () => {
    const mine = await t.client.managedSlicers.create({ ...slicerBody('mine'), ingest_protocol: 'srt' });
    await runTasks();
    const key = keyOf(await t.client.managedSlicers.get(mine.id));
    const other = t.other.client;
    const answers = [
      await other.core.send('POST', `${SLICERS}/${mine.id}/rotate-stream-key`),
      await other.core.send('GET', `${SLICERS}/${mine.id}`),
      await other.core.send('GET', `${SLICERS}/restart/${mine.id}`),
      await other.core.send('GET', SLICERS),
      await other.core.send('GET', TASKS),
    ];
    assert.deepEqual(answers.map((a) => a.status), [404, 404, 404, 200, 200]);
    for (const answer of answers) for (const seen of seenKeys) assert.ok(!answer.body.includes(seen), answer.body);
    assert.equal(keyOf(await t.client.managedSlicers.get(mine.id)), key, 'unchanged');
    assert.equal((await t.client.managedSlicers.listTasks({ slicer_id: mine.id })).page.items.length, 1, 'no RESTART enqueued');
  });

  test('no key, old or current, is in a log line, the task list, a task or the metrics', async () => {
    assert.ok(seenKeys.size >= 7);
    assert.ok(logs.length > 20, 'the run logged (requests, tasks)');
    assert.ok(logs.some((line) => line.includes('rotate-stream-key')), 'rotation requests are among them');
    const tasks = await t.client.core.send('GET', TASKS);
    const task = await t.client.core.send('GET', `${TASKS}/${(JSON.parse(tasks.body) as { items: { id: string }[] }).items[0]?.id ?? ''}`);
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
    assert.deepEqual([tasks.status, task.status, metrics.statusCode], [200, 200, 200]);
    for (const key of seenKeys) {
      assert.ok(!logs.some((line) => line.includes(key)), `key ${key.slice(0, 4)}… logged`);
      assert.ok(!tasks.body.includes(key) && !task.body.includes(key) && !metrics.body.includes(key));
    }
  });
});
