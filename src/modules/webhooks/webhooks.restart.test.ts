import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { testEngines, type TestStorage } from '../../../test/helpers/engines.js';
import { eventually } from '../../../test/helpers/eventually.js';
import { migrations } from '../../migrations.js';
import { FakeClock } from '../../platform/clock.js';
import { loadConfig } from '../../platform/config.js';
import { openStorage } from '../../platform/db/database.js';
import { createRuntime, type Runtime } from '../../runtime.js';
import { startLocalReceiver } from '../../platform/outbound/testing/local-receiver.js';
import { RETRY_SCHEDULE_MS } from './webhook-deliverer.js';
import * as repo from './webhooks.repository.js';

const opts = { timeout: 60_000 };

/** A server process over the engine's database: its own connection, as after a restart. */
const openServer = async (engine: TestStorage, clock: FakeClock): Promise<Runtime> => {
  const config = loadConfig({
    PLAYLINE_DATA_DIR: engine.dataDir,
    PLAYLINE_LOG_LEVEL: 'silent',
    PLAYLINE_SECRET_KEY: Buffer.alloc(32, 7).toString('base64'),
    PLAYLINE_SLICER_PROVISIONER: 'simulated',
    PLAYLINE_PUBLISHER: 'simulated',
    PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32',
  });
  const storage = await openStorage({ dataDir: engine.dataDir, migrations, ...(engine.databaseUrl ? { databaseUrl: engine.databaseUrl, pgSchema: engine.pgSchema as string } : {}) });
  const runtime = await createRuntime(config, { clock, storage });
  await runtime.start();
  const close = runtime.close.bind(runtime);
  runtime.close = async () => {
    await close();
    await storage.close();
  };
  return runtime;
};

for (const engine of await testEngines()) {
  describe(`webhook deliveries across a restart (${engine.engine})`, { skip: engine.skip }, () => {
    const cleanups: Array<() => Promise<void>> = [];
    after(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup();
    });

    test('an attempt due after a restart is made by the next server: nothing is lost, the event keeps its webhook-id', opts, async () => {
      const data = await engine.open();
      cleanups.push(() => data.cleanup());
      const receiver = await startLocalReceiver({ kind: 'status', status: 500 }, { hangLimitMs: 10_000 });
      cleanups.push(() => receiver.close());
      // 150 s behind the real clock: the verifier compares the signed timestamp with it.
      const clock = new FakeClock(Date.now() - 150_000);

      const first = await openServer(data, clock);
      const workspace = await first.workspaces.createWorkspace('restart');
      const sub = await first.webhooks.service.create(workspace.id, { url: receiver.url, event_types: ['live.ended'] });
      await first.webhooks.events.publish(workspace.id, 'live.ended', { slicer_id: 's9', state: 'waiting_for_source' });
      await receiver.waitFor(1);
      await eventually(async () => (await first.webhooks.service.listAttempts(workspace.id, {})).total === 1, 'the first attempt logged');
      await first.close();

      // The server is down when the retry falls due; the next one makes it.
      clock.advance(RETRY_SCHEDULE_MS[1] as number);
      receiver.setBehaviour({ kind: 'status', status: 200 });
      const second = await openServer(data, clock);
      cleanups.push(() => second.close());
      await receiver.waitFor(2);
      await eventually(async () => (await second.webhooks.service.listAttempts(workspace.id, {})).total === 2, 'the second attempt logged');

      const [failed, delivered] = receiver.received;
      assert.equal(delivered?.headers['webhook-id'], failed?.headers['webhook-id']);
      const headers = Object.fromEntries(Object.entries(delivered?.headers ?? {}).map(([k, v]) => [k, String(v)]));
      const event = new Webhook(sub.signing_secret).verify(delivered?.body ?? '', headers) as { type: string; data: Record<string, unknown> };
      assert.deepEqual(event.data, { owner: workspace.id, slicer_id: 's9', state: 'waiting_for_source' });
      const log = (await second.webhooks.service.listAttempts(workspace.id, {})).items.reverse();
      assert.deepEqual(log.map((a) => a.outcome), ['non_200', 'delivered']);
      assert.equal(await repo.countPending(second.storage.db, sub.id), 0);
    });

    test('a delivery held by a server killed mid-attempt is taken back by the next one (embedded: at start)', opts, async () => {
      const data = await engine.open();
      cleanups.push(() => data.cleanup());
      const receiver = await startLocalReceiver({ kind: 'status', status: 200 }, { hangLimitMs: 10_000 });
      cleanups.push(() => receiver.close());
      const clock = new FakeClock(Date.now() - 150_000);
      const server = await openServer(data, clock);
      cleanups.push(() => server.close());
      const workspace = await server.workspaces.createWorkspace('killed');
      const sub = await server.webhooks.service.create(workspace.id, { url: receiver.url, event_types: ['asset.ready'] });
      // As a killed server leaves it: claimed, lease running, never finished.
      await repo.insertPendingDelivery(server.storage.db, {
        id: 'whd_killed', workspace_id: workspace.id, subscription_id: sub.id, event_id: 'msg_killed', event_type: 'asset.ready',
        body: JSON.stringify({ type: 'asset.ready', timestamp: '2026-11-21T10:00:00.000000Z', data: { owner: workspace.id, asset_id: 'a1' } }),
        attempts: 0, next_attempt_at: clock.now(), lease_owner: 'dead-server', lease_expires_at: clock.now() + 3_600_000, created_at: clock.now(),
      });
      await server.webhooks.deliverer.claimNow();
      assert.equal(receiver.count(), 0, 'a live lease is left alone');
      await server.close();
      cleanups.pop();
      const next = await openServer(data, clock);
      cleanups.push(() => next.close());
      await receiver.waitFor(1);
      assert.equal(receiver.received[0]?.headers['webhook-id'], 'msg_killed');
    });
  });
}
