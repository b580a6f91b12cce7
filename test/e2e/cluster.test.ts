import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startLocalReceiver, type LocalReceiver } from '../../src/platform/outbound/testing/local-receiver.js';
import type { ServerProcess } from '../helpers/server-process.js';
import { clusterFixture, pollUntil } from '../helpers/cluster.js';

// Real instances on one PostgreSQL database and one Redis: what one accepts, the other answers;
// dedupe, callback settings and slicer tasks hold across them; kill -9 loses nothing acked.
// Each test asks for the instances it needs (`running`), so none depends on what an earlier one
// started, killed or left behind.
const fx = await clusterFixture({ env: { PLAYLINE_SLICER_PROVISIONER: 'simulated', PLAYLINE_SLICER_LEASE_MS: '2000', PLAYLINE_SLICER_PROVISION_MS: '50', PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32' } });
const receivers: LocalReceiver[] = [];
after(async () => {
  for (const receiver of receivers) await receiver.close();
  await fx.cleanup();
});

const T = () => Date.now();
const starts = (owner: string, asset: string, sessions: number, tag: string) =>
  Array.from({ length: sessions }, (_, i) => ({ type: 'start' as const, owner, asset_id: asset, session_id: `${tag}-${i}`, ts: T() }));

/** Instances shared by the tests while they live; a test that kills one leaves the replacement to whoever needs it. */
const pool: ServerProcess[] = [];
const alive = (server: ServerProcess) => server.child.exitCode === null && server.child.signalCode === null;
async function running(count: 1): Promise<[ServerProcess]>;
async function running(count: 2): Promise<[ServerProcess, ServerProcess]>;
async function running(count: number): Promise<ServerProcess[]> {
  for (let i = pool.length - 1; i >= 0; i--) if (!alive(pool[i] as ServerProcess)) pool.splice(i, 1);
  while (pool.length < count) pool.push(await fx.start());
  return pool.slice(0, count);
}

describe('cluster mode, two instances', { skip: fx.skip, timeout: 120_000 }, () => {
  test('a slicer task claimed by an instance killed with -9 is taken over and finished by another', async () => {
    // No other instance may claim the task first: the shared ones stop, the victim starts alone.
    for (const server of pool.splice(0)) await server.stop();
    const victim = await fx.start({ PLAYLINE_SLICER_PROVISION_MS: '600000' }); // provisions "forever": still running when killed
    const slicer = await fx.client(victim).managedSlicers.create({ name: 'Takeover', region: 'eu-central-1', ingest_protocol: 'srt', output_profile: 'hd-1080p' });
    await pollUntil(() => fx.client(victim).managedSlicers.getTask(slicer.task.id), (t) => t.state === 'IN_PROGRESS', 'claimed by the victim');
    const [survivor] = await running(1);
    await victim.kill9();
    const done = await pollUntil(() => fx.client(survivor).managedSlicers.getTask(slicer.task.id), (t) => t.state === 'COMPLETED' || t.state === 'FAILED', 'taken over');
    assert.equal(done.state, 'COMPLETED');
    assert.match((await fx.client(survivor).managedSlicers.get(slicer.id)).ingest_url ?? '', /^srt:\/\//);
    const { page } = await fx.client(survivor).managedSlicers.listTasks({ slicer_id: slicer.id });
    assert.deepEqual(page.items.map((t) => `${t.operation}:${t.state}`), ['CREATE:COMPLETED'], 'the same task, not a second one');
  });

  test('events accepted by A are answered by B as soon as A answers 202; one start sent to both counts once', async () => {
    const [a, b] = await running(2);
    const owner = fx.owner;
    const accepted = await fx.client(a).vodStats.ingest([...starts(owner, 'asset-x', 3, 'x'), { type: 'manifest', owner, asset_id: 'asset-x', session_id: 'x-0', latency_ms: 42 }]);
    assert.equal(accepted.accepted, 4);
    const seen = await fx.client(b).vodStats.asset('asset-x'); // no waiting: the 202 came after Redis counted
    assert.equal(seen.stats.sessions.new, 3);
    assert.equal(seen.stats.sessions.manifest, 1);
    const same = { type: 'start' as const, owner, asset_id: 'asset-y', session_id: 'same-session', ts: T() };
    await Promise.all([fx.client(a).vodStats.ingest([same]), fx.client(b).vodStats.ingest([same])]);
    assert.equal((await fx.client(a).vodStats.asset('asset-y')).stats.sessions.new, 1);
    // Other tests use the same workspace: its ranking may hold their assets too, so ask for these two.
    const both = await fx.client(b).vodStats.search(['asset-y', 'asset-x']);
    assert.deepEqual(both.items.map((i) => [i.id, i.stats.sessions.new]).sort(), [['asset-x', 3], ['asset-y', 1]]);
  });

  test('a callback URL saved through A is what B delivers to', async (t) => {
    const [a, b] = await running(2);
    const first = await startLocalReceiver({ kind: 'status', status: 200 });
    const second = await startLocalReceiver({ kind: 'status', status: 200 });
    receivers.push(first, second);
    const errorEvent = (n: number) => [{ type: 'error' as const, owner: fx.owner, asset_id: 'asset-e', session_id: `e-${n}`, error_code: 104, url: 'https://cdn/x.m3u8' }];
    let n = 0;
    for (const receiver of [first, second]) {
      await fx.client(a).errorReporting.putSettings({ callback_url: receiver.url, enabled: true });
      const saved = Date.now();
      const before = receiver.count();
      // B gets error events until one reaches the new URL: B follows the change made on A.
      await pollUntil(async () => {
        await fx.client(b).vodStats.ingest(errorEvent(n++));
        return receiver.count();
      }, (count) => count > before, `B delivering to ${receiver.url}`);
      t.diagnostic(`B used the callback saved on A after ~${Date.now() - saved} ms`);
    }
  });

  test('kill -9 during ingest loses no event that was acknowledged', async () => {
    const [a, b] = await running(2);
    const acked: string[] = [];
    let stop = false;
    const sender = async (lane: number) => {
      for (let i = 0; !stop && i < 200; i++) {
        const asset = `k-${lane}-${i}`;
        const ok = await fx.client(a).vodStats.ingest(starts(fx.owner, asset, 5, asset)).then(() => true, () => false);
        if (!ok) return;
        acked.push(asset);
      }
    };
    const lanes = [0, 1, 2].map(sender);
    await pollUntil(async () => acked.length, (count) => count >= 20, 'some batches acknowledged');
    await a.kill9(); // batches in flight now are lost or kept, but never acknowledged and lost
    stop = true;
    await Promise.all(lanes);
    const check = async (server: ServerProcess) => {
      for (let i = 0; i < acked.length; i += 500) {
        const found = await fx.client(server).vodStats.search(acked.slice(i, i + 500));
        assert.equal(found.items.length, Math.min(500, acked.length - i), 'every acknowledged batch is counted');
        assert.ok(found.items.every((item) => item.stats.sessions.new === 5), 'each counted exactly once');
      }
    };
    await check(b);
    const [, restarted] = await running(2); // b and a replacement of a
    await check(restarted);
    const status = await fx.admin(b, 'GET', '/api/v4/admin/cluster');
    assert.equal((status.body as { mode: string }).mode, 'cluster');
  });
});
