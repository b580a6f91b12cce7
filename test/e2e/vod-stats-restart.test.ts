import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, statSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PlaylineClient } from '../../src/client/index.js';
import type { PlaybackEventInput } from '../../src/client/vod-stats.js';
import { bootstrapCredentials, startServerProcess, type ServerProcess } from '../helpers/server-process.js';

const dataDir = mkdtempSync(join(tmpdir(), 'playline-vod-stats-e2e-'));
const running: ServerProcess[] = [];
after(async () => {
  for (const server of running) if (server.child.exitCode === null && server.child.signalCode === null) await server.kill9();
  rmSync(dataDir, { recursive: true, force: true });
});

const start = async () => {
  const server = await startServerProcess({ PLAYLINE_DATA_DIR: dataDir });
  running.push(server);
  return server;
};

const LATE = ['late-7min', 'late-23h'];
const BATCH_ASSETS = Array.from({ length: 40 }, (_, i) => `asset-${String(i).padStart(2, '0')}`);
const ASSETS = [...BATCH_ASSETS, ...LATE];
const KINDS = ['request', 'manifest', 'ad', 'start', 'error'] as const;

/** A batch touching many assets: every kind, duplicates, latencies, error codes, recent timestamps. */
const batch = (owner: string, n: number): Partial<PlaybackEventInput>[] => {
  const now = Date.now();
  return Array.from({ length: 200 }, (_, i) => {
    const type = KINDS[(i * 7 + n) % KINDS.length] as (typeof KINDS)[number];
    return {
      type,
      owner,
      asset_id: BATCH_ASSETS[(i * 13 + n * 3) % BATCH_ASSETS.length] as string,
      session_id: `s${(i * 5 + n) % 23}`,
      ts: now - ((i * 997 + n * 131) % 100_000),
      ...(type === 'manifest' || type === 'ad' ? { latency_ms: ((i * 37 + n) % 400) / 8 } : {}),
      ...(type === 'error' ? { error_code: [103, 104, 110, 555][i % 4] as number } : {}),
    };
  });
};

/** Every statistic a client can read back, except the summary (its window follows the clock). */
const everything = async (client: PlaylineClient) => ({
  assets: await Promise.all(ASSETS.map((id) => client.vodStats.asset(id).catch((err: { status?: number }) => err.status))),
  search: await client.vodStats.search(ASSETS),
  top: await client.vodStats.all(),
});

test('statistics survive kill -9 exactly, and a graceful restart (snapshot) keeps them too', { timeout: 120_000 }, async (t) => {
  const first = await start();
  const { owner, key: apiKey } = bootstrapCredentials(first);
  const clientOf = (server: ServerProcess) => new PlaylineClient({ baseUrl: server.url, owner, apiKey });

  // Concurrent batches: the journal group-commits them, and counting follows journal order.
  const client = clientOf(first);
  const results = await Promise.all(Array.from({ length: 12 }, (_, n) => client.vodStats.ingest(batch(owner, n))));
  assert.deepEqual(results.map((r) => r.rejected.length), new Array(12).fill(0));
  // Late events count where they belong: an asset whose only session started 7 minutes or 23 hours ago is served.
  const lateAt = Date.now();
  const late = await client.vodStats.ingest([
    { type: 'start', owner, asset_id: 'late-7min', session_id: 'l1', ts: lateAt - 7 * 60_000 },
    { type: 'start', owner, asset_id: 'late-23h', session_id: 'l2', ts: lateAt - 23 * 3600_000 },
  ]);
  assert.equal(late.accepted, 2);
  for (const id of LATE) assert.equal((await client.vodStats.asset(id)).stats.sessions.new, 1, `${id} is served`);
  const before = await everything(client);
  assert.equal(before.search.total_items, ASSETS.length);
  assert.ok(before.top.items.some((a) => Object.keys(a.stats.errors).length > 0));
  assert.ok(before.top.items.some((a) => a.stats.latency.ad !== undefined));

  // Batches in flight when the process dies: each is all there after restart, or not at all.
  // Four senders, each sending its batches one after another; the kill comes with the first answer.
  const acknowledged = new Array<boolean>(40).fill(false);
  let firstAnswer: () => void = () => undefined;
  const answered = new Promise<void>((resolve) => (firstAnswer = resolve));
  const sender = async (lane: number) => {
    for (let n = lane; n < acknowledged.length; n += 4) {
      const events = ['c1', 'c2', 'c3'].map((session) => ({ type: 'start' as const, owner, asset_id: `crash-${n}`, session_id: session }));
      const ok = await client.vodStats.ingest(events).then(() => true, () => false);
      if (!ok) return;
      acknowledged[n] = true;
      firstAnswer();
    }
  };
  const senders = [0, 1, 2, 3].map(sender);
  await answered;
  await first.kill9();
  await Promise.all(senders);
  t.diagnostic(`batches acknowledged before kill -9: ${acknowledged.filter(Boolean).length}/${acknowledged.length}`);

  const second = await start();
  const afterCrash = clientOf(second);
  const recovered = await everything(afterCrash);
  assert.deepEqual(recovered.assets, before.assets, 'every asset exactly as before');
  assert.deepEqual(recovered.search, before.search);
  // The crash-* assets may join the ranking; the others keep their exact place and statistics.
  assert.deepEqual(recovered.top.items.filter((a) => !a.id.startsWith('crash-')), before.top.items);
  for (let n = 0; n < acknowledged.length; n++) {
    const got = await afterCrash.vodStats.asset(`crash-${n}`).then((a) => a.stats.sessions.new, (err: { status?: number }) => err.status);
    if (acknowledged[n]) assert.equal(got, 3, `acknowledged batch crash-${n} is complete`);
    else assert.ok(got === 3 || got === 404, `unacknowledged batch crash-${n} is all or nothing (${got})`);
  }
  const afterRecovery = await everything(afterCrash);

  assert.equal(await second.stop(), 0, 'graceful shutdown (writes a snapshot)');
  const third = await start();
  assert.deepEqual(await everything(clientOf(third)), afterRecovery, 'snapshot + journal restore the same statistics');
  await clientOf(third).vodStats.ingest(batch(owner, 99));
  const beforeDamage = await everything(clientOf(third));
  assert.equal(await third.stop(), 0, 'a second snapshot; the first is kept with the journal since it');

  // The newest snapshot damaged on disk: the next start falls back to the previous one plus the journal.
  const snapshots = readdirSync(join(dataDir, 'vod-stats')).filter((f) => f.startsWith('snapshot-')).sort();
  assert.equal(snapshots.length, 2);
  const newest = join(dataDir, 'vod-stats', snapshots[1] as string);
  truncateSync(newest, Math.floor(statSync(newest).size / 2));
  const fourth = await start();
  assert.match(fourth.output(), /skipped 1 unreadable snapshot/);
  assert.deepEqual(await everything(clientOf(fourth)), beforeDamage, 'the previous snapshot + journal restore the same statistics');
  assert.equal(await fourth.stop(), 0);
});
