import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { Redis } from 'ioredis';
import { testEngines, type TestStorage } from '../../../../test/helpers/engines.js';
import { testRedis } from '../../../../test/helpers/redis.js';
import { FakeClock } from '../../../platform/clock.js';
import { Membership } from '../../../platform/cluster/membership.js';
import { PostgresEventJournal } from '../journal/postgres-journal.js';
import { RedisStatsStore } from '../store/redis-stats-store.js';
import { joinStatsToCluster, startClusterStats, watchRedisConnection } from '../vod-stats.cluster.js';
import { ClusterIngestService } from './cluster-ingest.service.js';
import { StatsBinding } from './stats-binding.js';
import { StatsRebuild } from './stats-rebuild.js';

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };
const T0 = Date.UTC(2026, 10, 21, 10, 0);
const OWNER = 'ws-binding';
const auth = { owner: OWNER, kind: 'api' as const };
const startOf = (asset: string, session = 's1') => Buffer.from(JSON.stringify({ type: 'start', owner: OWNER, asset_id: asset, session_id: session, ts: T0 }));

const pg = (await testEngines()).find((e) => e.engine === 'postgres');
const redis = await testRedis();
const skip = redis.skip || pg?.skip || false;

describe('cluster statistics bound to their PostgreSQL journal', { skip }, () => {
  const storages: TestStorage[] = [];
  after(async () => {
    await redis.cleanup();
    for (const s of storages) await s.cleanup();
  });
  /** A fresh PostgreSQL schema: a database of its own. */
  const database = async () => {
    const s = await (pg as NonNullable<typeof pg>).open();
    storages.push(s);
    return s;
  };

  /** One instance of a deployment on `db`, its statistics under `prefix` (wired as createClusterStats does). */
  const instance = (s: TestStorage, prefix: string, options: { rebuildOnMismatch?: boolean; client?: Redis } = {}) => {
    const clock = new FakeClock(T0);
    const client = options.client ?? redis.client();
    const store = new RedisStatsStore({ redis: client, clock, prefix: `${prefix}stats:` });
    const journal = new PostgresEventJournal({ db: s.storage.db, instanceId: `${prefix}node`, clock });
    const binding = new StatsBinding({ redis: client, journal, prefix: store.prefix });
    const ingest = new ClusterIngestService({ store, journal, clock, canCount: () => binding.bound, errorReports: { submit: () => undefined } });
    const rebuild = new StatsRebuild({ redis: client, store, journal, clock });
    const membership = new Membership({ redis: client, prefix: `${prefix}cluster:`, instanceId: `${prefix}node`, clock, log: silent });
    const parts = { ingest, store, journal, rebuild, binding, rebuildOnMismatch: options.rebuildOnMismatch ?? true, clock, log: silent };
    joinStatsToCluster(membership, parts);
    return { ...parts, client, membership, start: () => startClusterStats(parts) };
  };

  /** Ingests one batch per asset, each acknowledged; returns the assets not counted. */
  const ingestAll = async (node: ReturnType<typeof instance>, assets: string[]) => {
    for (const asset of assets) assert.equal((await node.ingest.ingest(startOf(asset), 'ndjson', auth)).accepted, 1);
    const missing: string[] = [];
    for (const asset of assets) if ((await node.store.get(OWNER, asset)) === undefined) missing.push(asset);
    return missing;
  };

  test('two deployments in a row on one Redis prefix: the second rebuilds from its own journal and counts every batch it acknowledges', async () => {
    const prefix = redis.prefix();
    const first = instance(await database(), prefix);
    await first.start();
    assert.deepEqual(await ingestAll(first, ['first-1', 'first-2', 'first-3', 'first-4']), []);

    // A new deployment: a fresh database (its journal hands out seqs 1, 2, ... again), the same Redis prefix.
    const second = instance(await database(), prefix);
    await second.start();
    assert.equal(second.binding.bound, true);
    assert.deepEqual(await ingestAll(second, ['second-1', 'second-2', 'second-3', 'second-4', 'second-5']), [], 'every acknowledged batch is counted');
    assert.equal(await second.store.get(OWNER, 'first-1'), undefined, "the other deployment's statistics are not served");
  });

  test('with rebuilds turned off, the second deployment refuses to start and counts nothing', async () => {
    const prefix = redis.prefix();
    const first = instance(await database(), prefix);
    await first.start();
    await ingestAll(first, ['kept']);
    const second = instance(await database(), prefix, { rebuildOnMismatch: false });
    await assert.rejects(second.start(), (error: Error) => {
      assert.match(error.message, new RegExp(`Redis under prefix ${prefix}stats: holds the statistics of deployment:epoch [0-9a-f]{32}:\\d+, but this database's journal is [0-9a-f]{32}:\\d+`));
      assert.match(error.message, /PLAYLINE_REDIS_PREFIX.*PLAYLINE_STATS_REBUILD_ON_MISMATCH=true/);
      return true;
    });
    assert.equal((await second.ingest.ingest(startOf('refused'), 'ndjson', auth)).accepted, 1, 'journaled and held');
    assert.equal(await second.store.get(OWNER, 'refused'), undefined);
    assert.equal(second.ingest.heldBatches(), 1);
    assert.equal((await first.store.get(OWNER, 'kept'))?.stats.new, 1, "the first deployment's statistics are left alone");
  });

  test('PostgreSQL restored to an earlier point (newest rows gone, the sequence reset): every batch acknowledged after it is counted', async () => {
    const prefix = redis.prefix();
    const s = await database();
    const node = instance(s, prefix);
    await node.start();
    assert.deepEqual(await ingestAll(node, ['before-1', 'before-2', 'before-3', 'lost-1', 'lost-2', 'lost-3']), []);
    const kept = Number((await sql<{ seq: number }>`select min(seq) + 2 as seq from vod_stats_journal`.execute(s.storage.db)).rows[0]?.seq);
    await sql`delete from vod_stats_journal where seq > ${kept}`.execute(s.storage.db);
    await sql`select setval(pg_get_serial_sequence('vod_stats_journal', 'seq'), ${kept})`.execute(s.storage.db);

    // The restored database hands the lost rows' seqs out again; a restart finds the same binding.
    const restarted = instance(s, prefix);
    await restarted.start();
    assert.deepEqual(await ingestAll(restarted, ['after-1', 'after-2', 'after-3', 'after-4']), [], 'counted, although their seqs were counted before');
  });

  test('restored to before the last rebuild (an older epoch): the start finds the statistics not bound and rebuilds them', async () => {
    const prefix = redis.prefix();
    const s = await database();
    const node = instance(s, prefix);
    await node.start();
    await ingestAll(node, ['epoch-1']);
    const { epoch } = await node.journal.binding();
    assert.ok((await node.rebuild.rebuild()) !== 'busy');
    await sql`update vod_stats_binding set epoch = ${epoch}`.execute(s.storage.db);
    const restarted = instance(s, prefix);
    assert.deepEqual(await restarted.binding.check(), { kind: 'foreign', redis: await restarted.client.get(restarted.binding.key), journal: `${(await restarted.journal.binding()).deploymentId}:${epoch}` });
    await restarted.start();
    assert.equal(restarted.binding.bound, true);
    assert.equal((await restarted.store.get(OWNER, 'epoch-1'))?.stats.new, 1, 'rebuilt from the journal');
  });

  test('after a Redis reconnect nothing is counted until the binding is checked; a Redis bound elsewhere is rebuilt by the chore', async () => {
    const prefix = redis.prefix();
    const client = redis.client();
    const node = instance(await database(), prefix, { client });
    watchRedisConnection(client, node.binding, silent);
    await node.start();
    await ingestAll(node, ['steady']);
    // Another Redis answers after the reconnect (simulated: its binding names another deployment).
    await client.set(node.binding.key, 'another-deployment:1');
    const checked = new Promise<void>((resolve) => client.once('ready', () => setImmediate(resolve)));
    client.disconnect(true);
    await checked;
    await node.binding.check(); // the check the 'ready' handler started, in order
    assert.equal(node.binding.bound, false);
    assert.equal((await node.ingest.ingest(startOf('held'), 'ndjson', auth)).accepted, 1);
    assert.equal(node.ingest.heldBatches(), 1, 'journaled, not counted into a Redis bound elsewhere');
    await node.membership.tick(); // the rebuild chore is due
    while (!node.binding.bound) await new Promise((resolve) => setImmediate(resolve));
    await node.ingest.retryHeld();
    assert.equal(node.ingest.heldBatches(), 0);
    assert.equal((await node.store.get(OWNER, 'held'))?.stats.new, 1);
    assert.equal((await node.store.get(OWNER, 'steady'))?.stats.new, 1);
  });
});
