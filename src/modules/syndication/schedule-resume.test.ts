import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../platform/errors.js';
import { eventually } from '../../../test/helpers/eventually.js';
import type { PublishJob } from './publisher.js';
import { createSyndicationTestApp, type SyndicationTestApp } from './syndication.test-support.js';

let s: SyndicationTestApp;
const started: string[] = [];
let refuse = new Set<string>();
before(async () => {
  s = await createSyndicationTestApp({
    module: {
      publisher: {
        start: async (job: PublishJob) => {
          if (refuse.has(job.contentId)) throw new AppError('content_not_live', `Content ${job.contentId} is not live`);
          started.push(job.scheduleId);
          return { ok: true };
        },
        stop: async () => undefined,
      },
    },
  });
});
after(() => s.close());

test('after a restart, started schedules (active or in error) push again; one whose content is gone goes to error with the reason', async () => {
  const target = await s.api.createTarget({ platform: 'Twitch', target_protocol: 'rtmp', target_stream: 'live_key' });
  const make = (content: string) => s.api.createSchedule({ syndication_target_id: target.id, content_id: content, content_type: 'e', region: s.module.regions[0] ?? 'us-west-2' });
  const [active, failing, stopped, gone] = await Promise.all([make('a'), make('b'), make('c'), make('gone')]);
  if (!active || !failing || !stopped || !gone) throw new Error('schedules were not created');
  for (const sched of [active, failing, gone]) await s.api.scheduleAction(sched.id, 'start');
  await s.module.schedules.markFailed(s.t.workspace.id, failing.id, 'destination refused');
  started.length = 0;
  refuse = new Set(['gone']);

  assert.equal(await s.module.schedules.resumePublishing(), 3);
  await eventually(async () => (await s.api.getSchedule(gone.id)).status === 'error', 'the schedule whose content is gone is in error');
  assert.deepEqual(started.sort(), [active.id, failing.id].sort());
  const after = await s.api.getSchedule(gone.id);
  assert.equal(after.status, 'error');
  assert.equal(after.error, 'Content gone is not live');
  assert.equal((await s.api.getSchedule(stopped.id)).status, 'stopped');
});
