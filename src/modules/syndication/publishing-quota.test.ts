import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Publisher } from './publisher.js';
import { createSyndicationTestApp, type SyndicationTestApp } from './syndication.test-support.js';

interface Problem {
  code: string;
  quota: string;
  limit: number;
  used: number;
  detail: string;
}

/** A publisher that records which schedules it was asked to start (a start is an ffmpeg push in production). */
const recordingPublisher = (): Publisher & { started: string[] } => {
  const started: string[] = [];
  return { started, start: async (job) => (started.push(job.scheduleId), { ok: true }), stop: async () => undefined };
};

describe('publishing quotas per workspace (review N14)', () => {
  let s: SyndicationTestApp;
  let publisher: ReturnType<typeof recordingPublisher>;
  let region: string;
  before(async () => {
    publisher = recordingPublisher();
    s = await createSyndicationTestApp({
      env: { PLAYLINE_QUOTA_TARGETS: '2', PLAYLINE_QUOTA_SCHEDULES: '4', PLAYLINE_QUOTA_ACTIVE_PUSHES: '2' },
      module: { publisher },
    });
    region = s.module.regions[0] ?? 'us-west-2';
  });
  after(() => s.close());

  const targetBody = { platform: 'Twitch', target_protocol: 'rtmp', target_stream: 'live_key' } as const;
  const scheduleBody = (targetId: string) => ({ syndication_target_id: targetId, content_id: 'channel-1', content_type: 'c' as const, region });
  const refusal = (response: { status: number; body: string }, quota: string, limit: number, used: number) => {
    assert.equal(response.status, 409, response.body);
    const problem = JSON.parse(response.body) as Problem;
    assert.deepEqual([problem.code, problem.quota, problem.limit, problem.used], ['quota_exceeded', quota, limit, used]);
    return problem;
  };
  const usage = async () => (JSON.parse((await s.client.core.send('GET', '/api/v4/workspace/usage')).body) as { quotas: Record<string, { used: number; limit: number }> }).quotas;

  test('targets and schedules beyond their quotas are 409 quota_exceeded naming the quota, its limit and the usage; another workspace is not held back', async () => {
    const target = await s.api.createTarget(targetBody);
    await s.api.createTarget(targetBody);
    const third = await s.client.core.send('POST', '/api/v4/syndication-target', { body: targetBody });
    assert.match(refusal(third, 'targets', 2, 2).detail, /PLAYLINE_QUOTA_TARGETS/);
    assert.equal((await s.api.listTargets()).items.length, 2, 'nothing was created');

    for (let i = 0; i < 4; i++) await s.api.createSchedule(scheduleBody(target.id));
    const fifth = await s.client.core.send('POST', '/api/v4/syndication-schedule', { body: scheduleBody(target.id) });
    assert.match(refusal(fifth, 'schedules', 4, 4).detail, /PLAYLINE_QUOTA_SCHEDULES/);

    const quotas = await usage();
    assert.deepEqual(quotas.targets, { used: 2, limit: 2 });
    assert.deepEqual(quotas.schedules, { used: 4, limit: 4 });
    assert.deepEqual(quotas.active_pushes, { used: 0, limit: 2 });

    const theirs = await s.otherApi.createTarget(targetBody);
    assert.ok(theirs.id, 'another workspace creates its own');
  });

  test('a start beyond the concurrent push quota is 409 quota_exceeded and spawns no push; the schedule stays stopped', async () => {
    const schedules = (await s.api.listSchedules()).items;
    assert.equal(schedules.length, 4);
    const [a, b, c, d] = schedules.map((x) => x.id) as [string, string, string, string];
    assert.equal((await s.api.scheduleAction(a, 'start')).status, 'active');
    // Two starts at once for the last place: exactly one wins.
    const raced = await Promise.all([b, c].map((id) => s.client.core.send('PATCH', `/api/v4/syndication-schedule-action/${id}`, { body: { mode: 'start' } })));
    assert.deepEqual(raced.map((r) => r.status).sort(), [200, 409], raced.map((r) => r.body).join('\n'));
    const loser = raced[0]?.status === 409 ? b : c;
    refusal(raced.find((r) => r.status === 409) ?? { status: 0, body: '{}' }, 'active_pushes', 2, 2);
    assert.equal((await s.api.getSchedule(loser)).status, 'stopped');

    const refused = await s.client.core.send('PATCH', `/api/v4/syndication-schedule-action/${d}`, { body: { mode: 'start' } });
    assert.match(refusal(refused, 'active_pushes', 2, 2).detail, /PLAYLINE_QUOTA_ACTIVE_PUSHES/);
    assert.equal((await s.api.getSchedule(d)).status, 'stopped');
    assert.equal(publisher.started.length, 2, 'no push was started for a refused schedule');
    assert.ok(!publisher.started.includes(d) && !publisher.started.includes(loser));
    assert.deepEqual((await usage()).active_pushes, { used: 2, limit: 2 });

    // A schedule in error still holds its place (its push retries); a stop frees it.
    await s.module.schedules.markFailed(s.t.workspace.id, a, 'ingest rejected the stream');
    refusal(await s.client.core.send('PATCH', `/api/v4/syndication-schedule-action/${d}`, { body: { mode: 'start' } }), 'active_pushes', 2, 2);
    await s.api.scheduleAction(a, 'stop');
    assert.equal((await s.api.scheduleAction(d, 'start')).status, 'active');
  });

  test('after a restart, started schedules beyond the push quota are stopped with the reason instead of spawning pushes', async () => {
    const started = (await s.api.listSchedules()).items.filter((x) => x.status !== 'stopped');
    assert.equal(started.length, 2);
    // As if the quota had been higher before the restart: a third schedule was started.
    const third = (await s.api.listSchedules()).items.find((x) => x.status === 'stopped');
    assert.ok(third);
    await s.module.db.updateTable('syndication_schedules').set({ status: 'active' }).where('id', '=', third.id).execute();
    publisher.started.length = 0;
    assert.equal(await s.module.schedules.resumePublishing(), 2);
    const after = (await s.api.listSchedules()).items;
    assert.equal(after.filter((x) => x.status === 'active').length, 2);
    const stopped = after.filter((x) => x.status === 'stopped' && typeof x.error === 'string' && x.error !== '');
    assert.equal(stopped.length, 1, JSON.stringify(after.map((x) => [x.id, x.status, x.error])));
    assert.match(stopped[0]?.error ?? '', /PLAYLINE_QUOTA_ACTIVE_PUSHES/);
    assert.equal(publisher.started.length, 2);
    assert.ok(!publisher.started.includes(stopped[0]?.id ?? ''), 'no push for the schedule beyond the quota');
  });
});
