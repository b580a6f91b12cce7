import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../../../test/helpers/test-app.js';
import { FakeClock } from '../../platform/clock.js';
import { runAllTasks, slicerBody } from './slicer-fixtures.test-support.js';

const SLICERS = '/api/v4/managed-slicer/slicers';
const TASKS = `${SLICERS}/tasks`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('managed slicer routes', () => {
  let t: TestApp;
  let clock: FakeClock;
  const env = { PLAYLINE_SLICER_PROVISION_MS: '2000', PLAYLINE_REGIONS: 'us-east-1,eu-central-1' };

  before(async () => {
    clock = new FakeClock();
    t = await createTestApp({ clock, env });
  });
  after(() => t.close());

  const runTasks = (owner = t.workspace.id) => runAllTasks(t.runtime.managedSlicers, clock, owner);

  test('create, update, restart, delete: each answers at once; the four tasks complete in order', async () => {
    const api = t.client.managedSlicers;
    const created = await t.client.core.send('POST', SLICERS, { body: slicerBody() });
    assert.equal(created.status, 201);
    const slicer = JSON.parse(created.body) as { id: string; state: string; task: { id: string; state: string; operation: string } };
    assert.equal(created.headers.location, `${SLICERS}/${slicer.id}`);
    assert.equal(slicer.state, 'provisioning');
    assert.equal(slicer.task.operation, 'CREATE');
    assert.match(slicer.task.id, UUID);

    const updated = await api.update(slicer.id, { output_profile: 'uhd-2160p' });
    assert.equal(updated.output_profile, 'uhd-2160p');
    assert.equal(updated.task.operation, 'UPDATE');
    assert.equal(updated.task.state, 'PENDING');
    const restarted = await t.client.core.send('GET', `${SLICERS}/restart/${slicer.id}`);
    assert.equal(restarted.status, 202);
    const deleted = await t.client.core.send('DELETE', `${SLICERS}/${slicer.id}`);
    assert.equal(deleted.status, 202);
    assert.equal((JSON.parse(deleted.body) as { task: { operation: string } }).task.operation, 'DELETE');

    await runTasks();
    const { page } = await api.listTasks({ slicer_id: slicer.id });
    assert.deepEqual(page.items.map((x) => `${x.operation}:${x.state}`), ['DELETE:COMPLETED', 'RESTART:COMPLETED', 'UPDATE:COMPLETED', 'CREATE:COMPLETED']);
    const gone = await t.client.core.send('GET', `${SLICERS}/${slicer.id}`);
    assert.equal(gone.status, 404);
  });

  test('restart answers as the published sample: @id of the restart resource, its task IN_PROGRESS once the runner has it (13.10)', async () => {
    const api = t.client.managedSlicers;
    const slicer = await api.create(slicerBody('restart me'));
    assert.equal(slicer.task.state, 'IN_PROGRESS', 'a change the runner takes at once says so');
    await runTasks();
    // The published sample's request: GET, msg and sig in the query, Content-Type: application/json, no body.
    const response = await t.client.core.send('GET', `${SLICERS}/restart/${slicer.id}`, { headers: { 'content-type': 'application/json' } });
    assert.equal(response.status, 202);
    const restarted = JSON.parse(response.body) as { '@id': string; '@type': string; task: { id: string; state: string; operation: string } };
    assert.equal(restarted['@id'], `${SLICERS}/restart/${slicer.id}`);
    assert.equal(restarted['@type'], 'ManagedSlicer');
    assert.match(restarted.task.id, UUID);
    assert.deepEqual(restarted.task, { id: restarted.task.id, state: 'IN_PROGRESS', operation: 'RESTART' });
    assert.equal((await api.getTask(restarted.task.id)).state, 'IN_PROGRESS', 'the answer tells the stored truth');

    // While that restart runs, the next change of the slicer waits its turn: PENDING.
    const queued = await api.restart(slicer.id);
    assert.deepEqual(queued.task, { id: queued.task.id, state: 'PENDING', operation: 'RESTART' });
    await runTasks();
    assert.equal((await api.getTask(queued.task.id)).state, 'COMPLETED');
  });

  test('the OpenAPI document describes the task list without parameters and the restart answer', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v4/openapi.json' })).json() as {
      paths: Record<string, { get?: { description?: string; parameters?: { name: string; required: boolean; description?: string }[] } }>;
    };
    const list = doc.paths[TASKS]?.get;
    assert.ok(list?.parameters?.every((p) => !p.required), 'every parameter optional');
    assert.match(list?.parameters?.find((p) => p.name === 'limit')?.description ?? '', /Without it, every task/);
    assert.match(doc.paths[`${SLICERS}/restart/{id}`]?.get?.description ?? '', /IN_PROGRESS when the task runner took it up at once/);
  });

  test('validation: unknown fields, bad values and unknown regions are 400 with their paths', async () => {
    const send = (body: unknown) => t.client.core.send('POST', SLICERS, { body });
    const cases: [unknown, string][] = [
      [{ ...slicerBody(), ingestProtocol: 'rtmp' }, '/ingestProtocol'],
      [{ ...slicerBody(), ingest_protocol: 'webrtc' }, '/ingest_protocol'],
      [{ ...slicerBody(), output_profile: '8k' }, '/output_profile'],
      [{ ...slicerBody(), name: '' }, '/name'],
      [{ ...slicerBody(), region: 'ap-southeast-2' }, '/region'],
      [{ ...slicerBody(), dvr_window_s: -1 }, '/dvr_window_s'],
      [{ ...slicerBody(), dvr_window_s: 1.5 }, '/dvr_window_s'],
      [{ ...slicerBody(), dvr_window_s: 7201 }, '/dvr_window_s'],
    ];
    for (const [body, path] of cases) {
      const response = await send(body);
      assert.equal(response.status, 400, JSON.stringify(body));
      const problem = JSON.parse(response.body) as { code: string; errors: { path: string }[] };
      assert.equal(problem.code, 'validation_failed');
      assert.ok(problem.errors.some((e) => e.path === path), `${path} in ${response.body}`);
    }
    const slicer = await t.client.managedSlicers.create(slicerBody());
    const empty = await t.client.core.send('PATCH', `${SLICERS}/${slicer.id}`, { body: {} });
    assert.equal(empty.status, 400);
    const badFilter = await t.client.core.send('GET', TASKS, { query: { state: 'DONE' } });
    assert.equal(badFilter.status, 400);
    const badCursor = await t.client.core.send('GET', TASKS, { query: { cursor: 'nope' } });
    assert.equal(badCursor.status, 400);
    await runTasks();
  });

  test('dvr_window_s: the deployment\'s window (7200 s) unless given, kept through the database, changed by PATCH within its bound', async () => {
    const api = t.client.managedSlicers;
    const byDefault = await api.create(slicerBody('dvr default'));
    assert.equal(byDefault.dvr_window_s, 7200);
    const short = await api.create({ ...slicerBody('dvr short'), dvr_window_s: 600 });
    assert.equal(short.dvr_window_s, 600);
    assert.equal((await api.get(short.id)).dvr_window_s, 600, 'read back from the store');
    const none = await api.update(short.id, { dvr_window_s: 0 });
    assert.equal(none.dvr_window_s, 0);
    assert.equal((await api.get(short.id)).dvr_window_s, 0);
    const over = await t.client.core.send('PATCH', `${SLICERS}/${short.id}`, { body: { dvr_window_s: 7201 } });
    assert.equal(over.status, 400);
    assert.match(over.body, /PLAYLINE_LIVE_DVR_WINDOW_S/);
    assert.equal((await api.get(short.id)).dvr_window_s, 0, 'a refused change changes nothing');
    await runTasks();
  });

  test('a slicer being deleted takes no further change (409); unknown ids are 404', async () => {
    const slicer = await t.client.managedSlicers.create(slicerBody());
    await t.client.managedSlicers.delete(slicer.id);
    const late = await t.client.core.send('PATCH', `${SLICERS}/${slicer.id}`, { body: { name: 'late' } });
    assert.equal(late.status, 409);
    assert.equal((JSON.parse(late.body) as { code: string }).code, 'slicer_deletion_pending');
    assert.equal((await t.client.core.send('GET', `${SLICERS}/restart/nope`)).status, 404);
    assert.equal((await t.client.core.send('GET', `${TASKS}/00000000-0000-4000-8000-00000000ffff`)).status, 404);
    await runTasks();
  });

  test("security: unsigned is 401; another workspace's slicers and tasks are 404 and never listed", async () => {
    const mine = await t.client.managedSlicers.create(slicerBody('mine'));
    const unsigned = await t.app.inject({ method: 'GET', url: TASKS });
    assert.equal(unsigned.statusCode, 401);
    const other = t.other.client;
    for (const [method, path] of [
      ['GET', `${SLICERS}/${mine.id}`],
      ['PATCH', `${SLICERS}/${mine.id}`],
      ['DELETE', `${SLICERS}/${mine.id}`],
      ['GET', `${SLICERS}/restart/${mine.id}`],
      ['POST', `${SLICERS}/${mine.id}/rotate-stream-key`],
      ['GET', `${TASKS}/${mine.task.id}`],
    ] as const) {
      const response = await other.core.send(method, path, method === 'PATCH' ? { body: { name: 'x' } } : {});
      assert.equal(response.status, 404, `${method} ${path}`);
    }
    const theirs = await other.managedSlicers.listTasks();
    assert.equal(theirs.page.total_items, 0);
    assert.equal((await other.managedSlicers.listTasks({ slicer_id: mine.id })).page.items.length, 0);
    assert.equal((await other.managedSlicers.list()).page.total_items, 0);
    const own = await t.client.managedSlicers.get(mine.id);
    assert.equal(own.name, 'mine');
    await runTasks();
  });
});

describe('the tasks list (task runner not started, so every task stays PENDING)', () => {
  let q: TestApp;
  let clock: FakeClock;

  before(async () => {
    clock = new FakeClock();
    // 30 slicers of one workspace make a long task list: above the default slicer quota (16).
    q = await createTestApp({ clock, start: false, env: { PLAYLINE_REGIONS: 'eu-central-1', PLAYLINE_QUOTA_SLICERS: '64' } });
  });
  after(() => q.close());

  test('the tasks list has exactly the spec shape, with filters and cursor pages', async () => {
    const api = q.client.managedSlicers;
    const one = await api.create(slicerBody('one'));
    const two = await api.create(slicerBody('two'));
    await api.restart(one.id);
    const response = await q.client.core.send('GET', TASKS, { query: { state: 'PENDING' } });
    assert.equal(response.status, 200);
    const body = JSON.parse(response.body) as { '@id': string; '@type': string; items: Record<string, unknown>[]; total_items: number };
    assert.deepEqual(Object.keys(body).sort(), ['@id', '@type', 'items', 'total_items']);
    assert.equal(body['@id'], `${TASKS}?state=PENDING`);
    assert.equal(body['@type'], 'Collection');
    assert.equal(body.total_items, 3);
    assert.equal(body.items.length, 3);
    for (const item of body.items) {
      assert.deepEqual(Object.keys(item).sort(), ['@id', '@type', 'id', 'operation', 'slicer_id', 'state', 'timestamp']);
      assert.equal(item['@id'], `${TASKS}/${String(item.id)}`);
      assert.equal(item['@type'], 'ManagedSlicerTask');
      assert.match(String(item.id), UUID);
      assert.equal(item.timestamp, Math.floor(clock.now() / 1000), 'Unix seconds');
    }
    assert.deepEqual(body.items.map((i) => i.operation), ['RESTART', 'CREATE', 'CREATE']);

    const first = await api.listTasks({ state: 'PENDING', limit: 2 });
    assert.equal(first.page.items.length, 2);
    assert.equal(first.page.total_items, 3);
    assert.ok(first.nextCursor);
    const second = await api.listTasks({ state: 'PENDING', limit: 2, cursor: first.nextCursor });
    assert.deepEqual(second.page.items.map((i) => i.slicer_id), [one.id]);
    assert.equal(second.nextCursor, undefined);
    const all: string[] = [];
    for await (const task of api.allTasks({ operation: 'CREATE', limit: 1 })) all.push(task.slicer_id);
    assert.ok(all.indexOf(two.id) < all.indexOf(one.id), 'newest first');

    const single = await api.getTask(body.items[0]?.id as string);
    assert.deepEqual(single, body.items[0]);
    const restarted = await api.restart(two.id);
    assert.equal(restarted['@id'], `${SLICERS}/restart/${two.id}`);
    assert.equal(restarted.task.state, 'PENDING', 'no runner has taken it');
  });

  test('without parameters the list holds every task, newest first, total_items the total (13.10)', async () => {
    const api = q.client.managedSlicers;
    for (let i = 0; i < 30; i++) {
      const slicer = await api.create(slicerBody(`many ${i}`));
      clock.advance(1000);
      await api.restart(slicer.id);
    }
    const total = (await q.runtime.managedSlicers.service.listTasks(q.workspace.id, {})).total;
    assert.ok(total > 60, 'more tasks than any page size');
    // The published sample's request: GET with only the signature (msg, sig) in the query.
    const response = await q.app.inject({ method: 'GET', url: q.client.core.signedPath(TASKS), headers: { accept: '*/*', 'user-agent': 'python-requests/2.32.3' } });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers.link, undefined, 'no next page');
    const body = JSON.parse(response.body) as { '@id': string; items: { timestamp: number; operation: string }[]; total_items: number };
    assert.equal(body['@id'], TASKS);
    assert.equal(body.total_items, total);
    assert.equal(body.items.length, total);
    assert.ok(body.items.every((t, i, list) => i === 0 || (list[i - 1]?.timestamp ?? 0) >= t.timestamp), 'newest first');
    assert.equal(body.items[0]?.operation, 'RESTART');
    const paged = await api.listTasks({ limit: 10 });
    assert.equal(paged.page.items.length, 10);
    assert.equal(paged.page.total_items, total);
    assert.ok(paged.nextCursor);
  });
});

describe('managed slicers without ffmpeg', () => {
  const missing = async () => ({ available: false as const, reason: 'ffmpeg not found (ffmpeg). Install it' });

  test('a create answers 503 media_tools_missing (no slicer that receives nothing is made) unless simulated slicers are chosen', async () => {
    const t = await createTestApp({ env: { PLAYLINE_SLICER_PROVISIONER: 'auto' }, overrides: { mediaTools: missing } });
    try {
      const refused = await t.client.core.send('POST', '/api/v4/managed-slicer/slicers', { body: slicerBody() });
      assert.equal(refused.status, 503, refused.body);
      assert.match(refused.body, /media_tools_missing/);
      assert.equal((await t.client.managedSlicers.list()).page.total_items, 0);
    } finally {
      await t.close();
    }
    const simulated = await createTestApp({ env: { PLAYLINE_SLICER_PROVISIONER: 'simulated' }, overrides: { mediaTools: missing } });
    try {
      const slicer = await simulated.client.managedSlicers.create(slicerBody());
      assert.equal(slicer.task.operation, 'CREATE');
    } finally {
      await simulated.close();
    }
  });
});
