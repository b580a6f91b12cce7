import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PlaylineApiError } from '../../client/index.js';
import { outboundOf } from '../../platform/net/outbound.js';
import { createSyndicationModule } from './syndication.module.js';
import { createSyndicationTestApp, type SyndicationTestApp } from './syndication.test-support.js';

const apiError = (status: number, code?: string) => (err: unknown) =>
  err instanceof PlaylineApiError && err.status === status && (code === undefined || err.code === code);

describe('publishing schedule routes', () => {
  let s: SyndicationTestApp;
  let region: string;
  before(async () => {
    s = await createSyndicationTestApp();
    region = s.module.regions[0] ?? 'us-west-2';
  });
  after(() => s.close());

  const newTarget = () => s.api.createTarget({ platform: 'Twitch', target_protocol: 'rtmp', target_stream: 'live_key' });
  const newSchedule = (targetId: string) =>
    s.api.createSchedule({ syndication_target_id: targetId, content_id: 'channel-1', content_type: 'c', region });
  const targetStatus = async (id: string) => (await s.api.getTarget(id)).status;

  test('start, stop and error move the target status exactly by the derivation rule', async () => {
    const target = await newTarget();
    const a = await newSchedule(target.id);
    const b = await newSchedule(target.id);
    assert.equal(a.status, 'stopped');
    assert.equal(a['@id'], `/api/v4/syndication-schedule/${a.id}`);
    assert.equal(await targetStatus(target.id), 'stopped');

    assert.equal((await s.api.scheduleAction(a.id, 'start')).status, 'active');
    assert.equal(await targetStatus(target.id), 'active');
    assert.equal((await s.api.scheduleAction(a.id, 'start')).status, 'active', 'starting again changes nothing');

    await s.module.schedules.markFailed(s.t.workspace.id, a.id, 'ingest rejected the stream');
    assert.equal(await targetStatus(target.id), 'error');
    const failed = await s.api.getSchedule(a.id);
    assert.equal(failed.status, 'error');
    assert.equal(failed.error, 'ingest rejected the stream');

    assert.equal((await s.api.scheduleAction(b.id, 'start')).status, 'active');
    assert.equal(await targetStatus(target.id), 'error', 'error wins over active');

    assert.equal((await s.api.scheduleAction(a.id, 'stop')).status, 'stopped');
    assert.equal(await targetStatus(target.id), 'active');
    const listed = await s.api.listTargets();
    assert.equal(listed.items.find((t) => t.id === target.id)?.status, 'active', 'the list derives the same status');

    await s.api.scheduleAction(b.id, 'stop');
    assert.equal(await targetStatus(target.id), 'stopped');
  });

  test('a publisher that cannot start leaves the schedule in error', async () => {
    const failing = createSyndicationModule({
      db: s.t.runtime.storage.db,
      box: s.t.runtime.box,
      clock: s.clock,
      ids: s.t.runtime.ids,
      config: s.t.runtime.config,
      outbound: outboundOf(s.t.runtime.config, s.clock),
      log: s.t.runtime.log,
      publisher: { start: async () => ({ ok: false, reason: 'no capacity in region' }), stop: async () => undefined },
      quotas: s.t.runtime.quotas,
    });
    const target = await newTarget();
    const schedule = await newSchedule(target.id);
    const started = await failing.schedules.act(s.t.workspace.id, schedule.id, 'start');
    assert.equal(started.status, 'error');
    assert.equal(await targetStatus(target.id), 'error');
  });

  test('a target used by an active schedule cannot be deleted (409); stopped, it can', async () => {
    const target = await newTarget();
    const schedule = await newSchedule(target.id);
    await s.api.scheduleAction(schedule.id, 'start');
    await assert.rejects(() => s.api.deleteTarget(target.id), apiError(409, 'conflict'));
    await assert.rejects(() => s.api.deleteSchedule(schedule.id), apiError(409, 'conflict'));
    await assert.rejects(() => s.api.updateSchedule(schedule.id, { content_id: 'other' }), apiError(409, 'conflict'));
    await s.api.scheduleAction(schedule.id, 'stop');
    assert.equal((await s.api.deleteTarget(target.id)).message, 'Deleted');
    await assert.rejects(() => s.api.getSchedule(schedule.id), apiError(404), 'its stopped schedules go with it');
  });

  test('schedule CRUD: update, list by target, delete', async () => {
    const target = await newTarget();
    const schedule = await newSchedule(target.id);
    const updated = await s.api.updateSchedule(schedule.id, { content_id: 'event-9', content_type: 'e', scte35_enabled: 1, source_url_params: 'ad=1' });
    assert.deepEqual(
      { content_id: updated.content_id, content_type: updated.content_type, scte35_enabled: updated.scte35_enabled, source_url_params: updated.source_url_params },
      { content_id: 'event-9', content_type: 'e', scte35_enabled: 1, source_url_params: 'ad=1' },
    );
    const listed = await s.api.listSchedules(target.id);
    assert.deepEqual(listed.items.map((x) => x.id), [schedule.id]);
    assert.equal(listed.total_items, 1);
    assert.deepEqual(await s.api.deleteSchedule(schedule.id), { '@id': `/api/v4/syndication-schedule/${schedule.id}`, '@type': 'SyndicationSchedule', message: 'Deleted' });
  });

  test('a schedule must name a target of this workspace and a configured region', async () => {
    const theirs = await s.otherApi.createTarget({ platform: 'Twitch', target_protocol: 'rtmp', target_stream: 'k' });
    const response = await s.client.core.send('POST', '/api/v4/syndication-schedule', {
      body: { syndication_target_id: theirs.id, content_id: 'c1', content_type: 'c', region: 'mars-north-1' },
    });
    assert.equal(response.status, 400);
    const problem = JSON.parse(response.body) as { errors: { path: string }[] };
    assert.deepEqual(problem.errors.map((e) => e.path).sort(), ['/region', '/syndication_target_id']);
  });

  test("another workspace's schedules are 404", async () => {
    const schedule = await newSchedule((await newTarget()).id);
    for (const attempt of [
      () => s.otherApi.getSchedule(schedule.id),
      () => s.otherApi.updateSchedule(schedule.id, { content_id: 'x' }),
      () => s.otherApi.scheduleAction(schedule.id, 'start'),
      () => s.otherApi.deleteSchedule(schedule.id),
    ]) {
      await assert.rejects(attempt, apiError(404, 'not_found'));
    }
    assert.equal((await s.otherApi.listSchedules()).total_items, 0);
  });

  test('starting a schedule of a Custom hls target generates the pull URL and shows it on the target', async () => {
    const target = await s.api.createTarget({ platform: 'Custom', target_protocol: 'hls' });
    assert.equal(target.target_stream, '', 'no pull URL before publishing starts');
    const schedule = await newSchedule(target.id);
    await s.api.scheduleAction(schedule.id, 'start');
    const shown = await s.api.getTarget(target.id);
    assert.match(shown.target_stream ?? '', new RegExp(`^http://[^/]+/syndication-pull/${target.id}/[0-9a-f]{32}/playlist\\.m3u8$`));
    await s.api.scheduleAction(schedule.id, 'stop');
    await s.api.scheduleAction(schedule.id, 'start');
    assert.equal((await s.api.getTarget(target.id)).target_stream, shown.target_stream, 'the pull URL stays stable');
    const roundTrip = await s.api.updateTarget(target.id, { platform: 'Custom', target_protocol: 'hls', target_stream: shown.target_stream ?? null, description: 'pull' });
    assert.equal(roundTrip.target_stream, shown.target_stream);
  });

  test('regions come from configuration; clipping profiles validate their services', async () => {
    const regions = await s.api.listRegions();
    assert.deepEqual(regions.items.map((r) => r.id), [...s.module.regions]);
    assert.equal(regions.total_items, s.module.regions.length);
    await assert.rejects(
      () => s.api.createClippingProfile({ description: 'x', integrations: [{ service: 'Twitch', account: 'a' }] }),
      (err: unknown) => apiError(400)(err) && JSON.stringify((err as PlaylineApiError).body).includes('/integrations/0/service'),
    );
    await assert.rejects(() => s.api.listClippingProfiles('facebook'), apiError(400, 'validation_failed'));
    const profile = await s.api.createClippingProfile({ description: 'yt', integrations: [{ service: 'YouTube', account: 'chan' }] });
    assert.equal((await s.api.getClippingProfile(profile.id)).description, 'yt');
    await assert.rejects(() => s.otherApi.getClippingProfile(profile.id), apiError(404));
    assert.deepEqual((await s.api.listClippingProfiles('Twitch')).items, []);
  });
});
