import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { clusterPair, clusterPairProblem, type ClusterPair } from '../test/helpers/cluster-pair.js';
import { openSqliteForTest, type TestStorage } from '../test/helpers/engines.js';
import { eventually } from '../test/helpers/eventually.js';
import { createTestApp, type TestApp } from '../test/helpers/test-app.js';
import { randomIds } from './platform/ids.js';
import type { PublishJob, Publisher } from './modules/syndication/publisher.js';
import { startLocalReceiver, type LocalReceiver } from './platform/outbound/testing/local-receiver.js';

/**
 * What `createRuntime` decides per deployment mode, observed from outside: each of these tests
 * fails when the one line of wiring it names is changed (the module behind it is tested on its own).
 */

/** A publisher that records which schedules it was asked to push, and never sends anything. */
const recordingPublisher = (): Publisher & { started: string[] } => {
  const started: string[] = [];
  return {
    started,
    start: async (job: PublishJob) => {
      started.push(job.scheduleId);
      return { ok: true };
    },
    stop: async () => undefined,
  };
};

/** A started schedule of the client's workspace (target and schedule created through the API). */
async function startedSchedule(t: TestApp): Promise<string> {
  const target = await t.client.syndication.createTarget({ platform: 'Twitch', target_protocol: 'rtmp', target_stream: 'live_key' });
  const schedule = await t.client.syndication.createSchedule({ syndication_target_id: target.id, content_id: 'event-1', content_type: 'e', region: 'us-west-2' });
  await t.client.syndication.scheduleAction(schedule.id, 'start');
  return schedule.id;
}

const endpointRate = async (t: TestApp): Promise<number> => {
  const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
  const value = /^playline_error_reporting_endpoint_rate (\S+)$/m.exec(metrics.body)?.[1];
  assert.ok(value !== undefined, 'the endpoint rate gauge is exported');
  return Number(value);
};

describe('embedded mode wiring', () => {
  let storage: TestStorage;
  const opened: TestApp[] = [];
  const publisher = recordingPublisher();
  // Two runs of the server over one database: the storage outlives each app.
  const open = async () => {
    const t = await createTestApp({ storage: { ...storage, cleanup: () => Promise.resolve() }, ids: randomIds, overrides: { syndication: { publisher } } });
    opened.push(t);
    return t;
  };
  before(async () => {
    storage = await openSqliteForTest();
  });
  after(async () => {
    for (const t of opened) await t.close().catch(() => undefined);
    await storage.cleanup();
  });

  test('the one instance owns every push: a started schedule pushes again after a restart (runtime: resumeOnStart)', async () => {
    const first = await open();
    const scheduleId = await startedSchedule(first);
    assert.deepEqual(publisher.started, [scheduleId]);
    await first.close();

    await open();
    await eventually(() => publisher.started.length === 2, 'the restarted server pushes the started schedule again');
    assert.deepEqual(publisher.started, [scheduleId, scheduleId]);
  });

  test('a second server on the same data directory is refused before any of its modules starts (runtime: the data directory lock comes first)', async () => {
    // The server of the test before still runs on this directory.
    const running = opened.at(-1);
    assert.ok(running);
    const second = await createTestApp({ storage: { ...storage, cleanup: () => Promise.resolve() }, ids: randomIds, start: false });
    opened.push(second);
    await assert.rejects(second.runtime.start(), /data directory .* is in use by another running Playline server \(process \d+\); one server per data directory/);
    assert.equal(second.runtime.mediaTools.found(), undefined, 'nothing after the lock ran: not even the look for ffmpeg');
    assert.ok(running.runtime.mediaTools.found() !== undefined);
  });

  test('the callback rate per endpoint is the whole configured rate (no cluster to share it with)', async () => {
    const t = await createTestApp({ env: { PLAYLINE_CALLBACK_RATE: '40' } });
    opened.push(t);
    assert.equal(await endpointRate(t), 40);
  });
});

const skip = await clusterPairProblem();

describe('cluster mode wiring', { skip }, () => {
  let pair: ClusterPair;
  let receiver: LocalReceiver;
  const publisher = recordingPublisher();
  before(async () => {
    pair = await clusterPair({ env: { PLAYLINE_CALLBACK_RATE: '40', PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32' }, overrides: { syndication: { publisher } } });
    receiver = await startLocalReceiver({ kind: 'status', status: 200 });
  });
  after(async () => {
    await pair?.close();
    await receiver?.close();
  });

  test("each live instance sends its share of every callback endpoint's rate (runtime: membership -> setRateShare)", async () => {
    const { a, b } = pair;
    const heartbeat = (t: TestApp) => t.runtime.cluster?.membership.tick();
    // Both instances registered at start; a heartbeat tells each how many are alive.
    await heartbeat(a);
    await heartbeat(b);
    assert.equal(await endpointRate(a), 20);
    assert.equal(await endpointRate(b), 20);
    const c = await pair.join();
    await heartbeat(c);
    await heartbeat(a);
    assert.ok(Math.abs((await endpointRate(a)) - 40 / 3) < 1e-9, 'a third instance takes its third');
    assert.ok(Math.abs((await endpointRate(c)) - 40 / 3) < 1e-9);
  });

  test('an instance that starts resumes no push: the instance that started it runs it (runtime: resumeOnStart only when embedded)', async () => {
    const scheduleId = await startedSchedule(pair.a);
    assert.deepEqual(publisher.started, [scheduleId]);
    // A new instance's whole start-up (modules, app, workspaces) and a heartbeat of its own go by.
    const joined = await pair.join();
    await joined.runtime.cluster?.membership.tick();
    await joined.client.workspace.get();
    assert.deepEqual(publisher.started, [scheduleId], 'the schedule is pushed once, by the instance that started it');
  });

  test('callback settings saved on one instance reach the others over the change feed, without waiting for the database check (runtime: callbackLinkOf)', async () => {
    const { a, b } = pair;
    const owner = a.workspace.id;
    assert.equal(b.runtime.errorReporting.dispatcher.routeFor(owner), undefined);
    await a.client.errorReporting.putSettings({ callback_url: receiver.url });
    // The fake clocks never move: the periodic database check of the settings cannot run.
    await eventually(() => b.runtime.errorReporting.dispatcher.routeFor(owner) !== undefined, 'B follows the saved callback');
  });
});
