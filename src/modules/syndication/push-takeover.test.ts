import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sequentialIds } from '../../platform/ids.js';
import type { Publisher, PublishJob } from './publisher.js';
import * as repo from './syndication.repository.js';
import { ScheduleService } from './schedule.service.js';
import { createSyndicationTestApp, type SyndicationTestApp } from './syndication.test-support.js';
import { eventually } from '../../../test/helpers/eventually.js';

/** A publisher that records which schedules it was asked to push and to stop. */
function recordingPublisher(): Publisher & { started: string[]; stopped: string[] } {
  const started: string[] = [];
  const stopped: string[] = [];
  return {
    started,
    stopped,
    start: (job: PublishJob) => {
      started.push(job.scheduleId);
      return Promise.resolve({ ok: true });
    },
    stop: (job: PublishJob) => {
      stopped.push(job.scheduleId);
      return Promise.resolve();
    },
  };
}

describe('cluster mode: a dead instance’s pushes are taken over by one survivor', () => {
  let s: SyndicationTestApp;
  before(async () => {
    s = await createSyndicationTestApp();
  });
  after(() => s.close());

  /** One instance's schedule service over the shared database. */
  const instance = (instanceId: string) => {
    const publisher = recordingPublisher();
    const service = new ScheduleService({
      db: s.module.db,
      clock: s.clock,
      ids: sequentialIds(),
      targets: s.module.targets,
      publisher,
      regions: s.module.regions,
      pullBaseUrl: 'http://127.0.0.1:1',
      quota: { schedules: 100, activePushes: 100 },
      instanceId,
    });
    return { service, publisher };
  };

  test('the instance that starts a push owns it; a survivor claims it once the owner is dead; the old owner lets go; a stop frees it', async () => {
    const owner = s.t.workspace.id;
    const target = await s.api.createTarget({ platform: 'Twitch', target_protocol: 'rtmp', target_stream: 'live_key' });
    const schedule = await s.api.createSchedule({ syndication_target_id: target.id, content_id: 'channel-1', content_type: 'e', region: s.module.regions[0] ?? 'us-west-2' });
    const a = instance('instance-a');
    const b = instance('instance-b');
    const c = instance('instance-c');
    const ownerOf = async () => (await repo.findSchedule(s.module.db, owner, schedule.id))?.publisher_instance;

    assert.equal((await a.service.act(owner, schedule.id, 'start')).status, 'active');
    assert.deepEqual(a.publisher.started, [schedule.id]);
    assert.equal(await ownerOf(), 'instance-a');
    assert.equal(await a.service.stillPublishing(owner, schedule.id, target.id), true);
    assert.equal(await b.service.takeOverPushes('instance-z'), 0, 'a dead instance that ran nothing leaves nothing');

    assert.equal(await b.service.takeOverPushes('instance-a'), 1);
    assert.equal(await c.service.takeOverPushes('instance-a'), 0, 'a second survivor finds it claimed');
    await eventually(() => b.publisher.started.includes(schedule.id), 'the survivor pushes it');
    assert.deepEqual(c.publisher.started, []);
    assert.equal(await ownerOf(), 'instance-b');
    assert.equal(await a.service.stillPublishing(owner, schedule.id, target.id), false, 'the old owner, if it still ran, lets go');
    assert.equal(await b.service.stillPublishing(owner, schedule.id, target.id), true);

    assert.equal((await b.service.act(owner, schedule.id, 'stop')).status, 'stopped');
    assert.equal(await ownerOf(), null);
    assert.equal(await c.service.takeOverPushes('instance-b'), 0, 'a stopped schedule is nobody’s to take over');
  });
});
