import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createTestApp, type TestApp } from '../../../test/helpers/test-app.js';
import { requireServices } from '../../../test/helpers/engines.js';
import { FakeClock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import { sequentialIds } from '../../platform/ids.js';
import { ManagedSlicerService } from './managed-slicers.service.js';
import { InMemorySlicerStore } from './memory-slicer-store.test-support.js';
import { regions, slicerBody, streamKeysOf } from './slicer-fixtures.test-support.js';

const SLICERS = '/api/v4/managed-slicer/slicers';

describe('slicers per workspace (review N11)', () => {
  let t: TestApp;
  before(async () => {
    // The default settings: 16 slicers per workspace, 64 in the deployment.
    t = await createTestApp({ clock: new FakeClock(), start: false, env: { PLAYLINE_REGIONS: regions.join(',') } });
  });
  after(() => t.close());

  test('a 17th slicer of one workspace is 409 quota_exceeded naming the quota, while another workspace still creates one', async () => {
    assert.equal(t.runtime.config.quotaSlicers, 16);
    assert.ok(t.runtime.config.maxSlicers > t.runtime.config.quotaSlicers, 'the deployment cap is above one workspace\'s share');
    for (let i = 0; i < 16; i++) await t.client.managedSlicers.create(slicerBody(`mine ${i}`));
    const seventeenth = await t.client.core.send('POST', SLICERS, { body: slicerBody('one too many') });
    assert.equal(seventeenth.status, 409, seventeenth.body);
    const problem = JSON.parse(seventeenth.body) as { code: string; quota: string; limit: number; used: number; detail: string };
    assert.deepEqual([problem.code, problem.quota, problem.limit, problem.used], ['quota_exceeded', 'slicers', 16, 16]);
    assert.match(problem.detail, /PLAYLINE_QUOTA_SLICERS/);
    assert.equal((await t.client.managedSlicers.list()).page.total_items, 16);

    const theirs = await t.other.client.core.send('POST', SLICERS, { body: slicerBody('theirs') });
    assert.equal(theirs.status, 201, theirs.body);
    const usage = JSON.parse((await t.client.core.send('GET', '/api/v4/workspace/usage')).body) as { quotas: { slicers: { used: number; limit: number } } };
    assert.deepEqual(usage.quotas.slicers, { used: 16, limit: 16 });
  });

  test('metrics: refusals by quota, workspaces at a quota and the limits, without a label per workspace; promtool accepts the page', async (ctx) => {
    const page = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    assert.match(page, /^playline_quota_refusals_total\{quota="slicers"\} 1$/m);
    assert.match(page, /^playline_quota_workspaces_at_limit\{quota="slicers"\} 1$/m);
    assert.match(page, /^playline_quota_workspaces_at_limit\{quota="targets"\} 0$/m);
    assert.match(page, /^playline_quota_limit\{quota="storage_bytes"\} 107374182400$/m);
    assert.doesNotMatch(page, new RegExp(t.workspace.id), 'no workspace id in a label');
    const found = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
    if (found.status !== 0) {
      assert.equal(requireServices, false, 'PLAYLINE_REQUIRE_SERVICES=1 but promtool is missing (apt-get install prometheus)');
      ctx.skip('promtool not found');
      return;
    }
    const checked = spawnSync('promtool', ['check', 'metrics'], { input: page, encoding: 'utf8' });
    assert.equal(checked.status, 0, `${checked.stdout}${checked.stderr}`);
  });

  test('creates at once for the last place: exactly one wins (decided in the create\'s transaction)', async () => {
    const owner = await t.runtime.workspaces.createWorkspace('racing');
    const key = await t.runtime.workspaces.createKey(owner.id);
    const client = t.clientFor(owner.id, key.secret);
    for (let i = 0; i < 15; i++) await client.managedSlicers.create(slicerBody(`r ${i}`));
    const answers = await Promise.all(Array.from({ length: 4 }, (_, i) => client.core.send('POST', SLICERS, { body: slicerBody(`last ${i}`) })));
    assert.deepEqual(answers.map((a) => a.status).sort(), [201, 409, 409, 409]);
    assert.equal((await client.managedSlicers.list()).page.total_items, 16);
  });
});

describe('the deployment cap stays as a second line behind the workspace quota', () => {
  const rejects = (promise: Promise<unknown>, code: string) => assert.rejects(promise, (err: unknown) => err instanceof AppError && err.code === code);

  test('per workspace first, then PLAYLINE_MAX_SLICERS over every workspace', async () => {
    const store = new InMemorySlicerStore();
    let held = 0;
    const service = new ManagedSlicerService({
      store, streamKeys: streamKeysOf(store), clock: new FakeClock(), ids: sequentialIds(), regions,
      maxSlicersPerWorkspace: 2,
      maxSlicers: () => 3,
      countSlicers: async () => held,
    });
    const create = async (owner: string) => {
      const created = await service.create(owner, slicerBody(owner));
      held += 1;
      return created;
    };
    await create('a');
    await create('a');
    await rejects(create('a'), 'quota_exceeded');
    await create('b');
    // The deployment is full: a workspace below its own quota is refused by the cap.
    await rejects(create('b'), 'conflict');
  });
});
