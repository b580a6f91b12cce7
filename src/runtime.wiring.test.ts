import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { clusterPair, clusterPairProblem, type ClusterPair } from '../test/helpers/cluster-pair.js';
import { openSqliteForTest, type TestStorage } from '../test/helpers/engines.js';
import { eventually } from '../test/helpers/eventually.js';
import { createTestApp, type TestApp } from '../test/helpers/test-app.js';
import { randomIds } from './platform/ids.js';
import type { PublishJob, Publisher } from './modules/syndication/publisher.js';
import { startLocalReceiver, type LocalReceiver } from './platform/outbound/testing/local-receiver.js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeClip, mediaToolsSkip } from '../test/helpers/media.js';
import { loadConfig } from './platform/config.js';
import type { ErrorReportSink } from './platform/error-report-sink.js';
import { UnwiredPortError } from './platform/wiring.js';
import { createRuntime } from './runtime.js';

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

  test('the wiring table, whole: every production port of every module, and what it got (runtime: wiring)', async () => {
    const t = await open();
    assert.deepEqual(t.runtime.wiring, {
      assets: { events: 'webhooks', 'media tools found later': 'media tools lookup', metrics: 'prometheus registry' },
      'error-reporting': { outbound: 'outbound layer' },
      'managed-slicers': { events: 'webhooks', recordings: 'asset library' },
      'playback-edge': { events: 'vod-stats ingest', metrics: 'prometheus registry', 'single-use claims': 'memory' },
      syndication: { events: 'webhooks', ffmpeg: 'media tools lookup', metrics: 'prometheus registry', outbound: 'outbound layer', 'resume on start': 'every started schedule' },
      'vod-stats': { 'error reports': 'error-reporting dispatcher' },
      webhooks: { 'event intake': 'webhook deliveries', outbound: 'outbound layer' },
    });
    await t.close();
  });

  test('the root refuses to start with a production port left unwired, naming it (runtime: the start-up check)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'playline-unwired-'));
    try {
      // A wrapper of the error-report sink that forgets to hand one back: statistics would drop every error report.
      const forgetful = (): ErrorReportSink => undefined as unknown as ErrorReportSink;
      await assert.rejects(createRuntime(loadConfig({ PLAYLINE_DATA_DIR: dataDir }), { errorReports: forgetful }), (err: unknown) => {
        assert.ok(err instanceof UnwiredPortError);
        assert.match(err.message, /not wired: vod-stats\.error reports/);
        return true;
      });
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
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

  test('the wiring table, whole, in cluster mode: Redis claims, the change feed, takeover instead of resume (runtime: wiring)', () => {
    for (const t of [pair.a, pair.b]) {
      assert.deepEqual(t.runtime.wiring, {
        assets: { events: 'webhooks', 'media tools found later': 'media tools lookup', metrics: 'prometheus registry' },
        'error-reporting': { outbound: 'outbound layer', 'settings link': 'change feed' },
        'managed-slicers': { events: 'webhooks', recordings: 'asset library' },
        'playback-edge': { events: 'vod-stats ingest', metrics: 'prometheus registry', 'single-use claims': 'redis' },
        syndication: { events: 'webhooks', ffmpeg: 'media tools lookup', metrics: 'prometheus registry', outbound: 'outbound layer', 'resume on start': 'none (takeover of dead instances)', takeover: 'cluster membership' },
        'vod-stats': { 'error reports': 'error-reporting dispatcher', 'shared counters': 'redis' },
        webhooks: { 'event intake': 'webhook deliveries', outbound: 'outbound layer' },
      });
    }
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

/**
 * The asset library's events reach webhooks through the root's wiring (review M7: dropping
 * `events` from createAssets compiled and passed every test). Uploaded through the app, packaged
 * by ffmpeg, delivered to a subscribed endpoint: nothing here hands the library a sink of its own.
 */
describe('asset library wiring', { skip: await mediaToolsSkip() }, () => {
  let t: TestApp;
  let receiver: LocalReceiver;
  let scratch: string;
  before(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'playline-wiring-assets-'));
    // The system clock: the webhook is signed with the time it is sent, however long packaging takes.
    t = await createTestApp({ env: { PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32', PLAYLINE_PACKAGING_LADDER: '144p', PLAYLINE_PACKAGING_PRESET: 'ultrafast' } });
    receiver = await startLocalReceiver({ kind: 'status', status: 200 });
  });
  after(async () => {
    await t?.close();
    await receiver?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  test('an upload through the app that becomes ready is delivered as asset.ready to a subscribed endpoint (runtime: assets.events = webhooks)', async () => {
    await t.client.webhooks.createSubscription({ url: receiver.url, event_types: ['asset.ready', 'asset.failed'] });
    const clip = await makeClip(scratch, 'clip.mp4', { seconds: 1, width: 160, height: 90 });
    const response = await t.client.core.send('POST', '/api/v4/assets', { body: readFileSync(clip), contentType: 'video/mp4', query: { title: 'Wiring' } });
    assert.equal(response.status, 201, response.body);
    const id = (JSON.parse(response.body) as { id: string }).id;
    const ready = await t.client.assets.waitUntilPackaged(id, { intervalMs: 50 });
    assert.equal(ready.state, 'ready', JSON.stringify(ready));
    await eventually(async () => {
      await t.runtime.webhooks.events.settled();
      await t.runtime.webhooks.deliverer.claimNow();
      return receiver.count() >= 1;
    }, 'the asset.ready delivery reached the endpoint');
    const event = JSON.parse(receiver.received[0]?.body ?? '{}') as { type?: string; data?: { asset_id?: string } };
    assert.deepEqual([event.type, event.data?.asset_id], ['asset.ready', id]);
  });
});
