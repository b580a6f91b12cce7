import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { testEngines, type TestStorage } from '../../../../test/helpers/engines.js';
import { testRedis } from '../../../../test/helpers/redis.js';
import { FakeClock } from '../../../platform/clock.js';
import type { PlaybackErrorReport } from '../../../platform/error-report-sink.js';
import type { StatsStore } from '../store/stats-store.js';
import { seededRandom } from '../test-events.test-support.js';
import { ClusterIngestService, type CountingStore } from './cluster-ingest.service.js';
import { Membership } from '../../../platform/cluster/membership.js';
import { PostgresEventJournal } from '../journal/postgres-journal.js';
import { RedisStatsStore } from '../store/redis-stats-store.js';
import { StatsRebuild } from './stats-rebuild.js';
import { StatsBinding } from './stats-binding.js';
import { joinStatsToCluster } from '../vod-stats.cluster.js';

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };
const T0 = Date.UTC(2026, 10, 21, 10, 0);
const ndjson = (...events: object[]) => Buffer.from(events.map((e) => JSON.stringify(e)).join('\n'));
// Each test its own workspace: the tests share one journal, and a rebuild replays all of it.
let owner = 'ws1';
const start = (asset: string, session: string, ts: number) => ({ type: 'start', owner, asset_id: asset, session_id: session, ts });
const auth = { get owner() { return owner; }, kind: 'api' as const };

/** Lets promise callbacks run until `done` holds (no time passes; the retries under test do no I/O until they succeed). */
async function turns(done: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (done()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`never reached: ${what}`);
}

const pg = (await testEngines()).find((e) => e.engine === 'postgres');
const redis = await testRedis();
const skip = redis.skip || pg?.skip || false;

describe('cluster ingest: PostgreSQL journal, Redis statistics', { skip }, () => {
  let s: TestStorage;
  before(async () => {
    s = await (pg as NonNullable<typeof pg>).open();
  });
  after(async () => {
    await redis.cleanup();
    await s?.cleanup();
  });

  /** Two instances on one journal and one Redis prefix, sharing a fake clock. */
  const cluster = () => {
    const clock = new FakeClock(T0);
    const prefix = redis.prefix();
    owner = `ws-${prefix}`;
    const reports: PlaybackErrorReport[] = [];
    const grants = { allowed: new Set<string>() };
    const owners = { allowedOwners: (o: string) => Promise.resolve(new Set([o, ...grants.allowed])), existing: (ids: readonly string[]) => Promise.resolve(new Set(ids)) };
    const node = (name: string, wrap: (store: RedisStatsStore) => CountingStore = (x) => x, maxAssetsPerWorkspace?: number) => {
      const client = redis.client();
      const store = new RedisStatsStore({ redis: client, clock, prefix: `${prefix}stats:`, ...(maxAssetsPerWorkspace ? { maxAssetsPerWorkspace } : {}) });
      const journal = new PostgresEventJournal({ db: s.storage.db, instanceId: `${prefix}${name}` });
      const ingest = new ClusterIngestService({ store: wrap(store), journal, clock, owners, errorReports: { submit: (r) => void reports.push(r) } });
      const rebuild = new StatsRebuild({ redis: client, store, journal, clock });
      const binding = new StatsBinding({ redis: client, journal, prefix: `${prefix}stats:` });
      const membership = new Membership({ redis: client, prefix: `${prefix}cluster:`, instanceId: `${prefix}${name}`, clock, log: silent });
      joinStatsToCluster(membership, { ingest, store, journal, rebuild, binding, rebuildOnMismatch: true, clock, log: silent });
      return { store, journal, ingest, rebuild, binding, membership, client, id: `${prefix}${name}` };
    };
    return { clock, node, reports, grants };
  };

  test('events ingested through A are answered by B; one start sent to A and to B counts once', async () => {
    const { clock, node, reports } = cluster();
    const a = node('a');
    const b = node('b');
    const first = await a.ingest.ingest(ndjson(start('asset-1', 's1', T0), { type: 'error', owner, asset_id: 'asset-1', session_id: 's1', ts: T0, error_code: 104 }), 'ndjson', auth);
    assert.deepEqual(first, { accepted: 2, rejected: [], rejected_count: 0 });
    assert.equal(reports.length, 1, 'the error event went to Error Reporting after the commit');
    assert.equal((await b.store.get(owner, 'asset-1'))?.stats.new, 1);
    clock.advance(5_000);
    await Promise.all([a.ingest.ingest(ndjson(start('asset-1', 's2', T0 + 5000)), 'ndjson', auth), b.ingest.ingest(ndjson(start('asset-1', 's2', T0 + 5000)), 'ndjson', auth)]);
    const seen = await a.store.get(owner, 'asset-1');
    assert.deepEqual([seen?.stats.new, seen?.ts], [2, T0 + 5000], 'dedupe holds across instances');
  });

  test('a batch Redis cannot count yet is accepted (it is journaled), held, and counted by the retry timer once Redis answers', async () => {
    const { clock, node } = cluster();
    let failures = 2;
    const calls: Array<Promise<unknown>> = [];
    const a = node('a', (store) => ({
      count: (...args: Parameters<RedisStatsStore['count']>) => {
        const call = failures-- > 0 ? Promise.reject(new Error('Redis down')) : store.count(...args);
        calls.push(call);
        return call;
      },
    }));
    assert.deepEqual(await a.ingest.ingest(ndjson(start('asset-2', 's1', T0)), 'ndjson', auth), { accepted: 1, rejected: [], rejected_count: 0 });
    assert.equal(await a.store.get(owner, 'asset-2'), undefined);
    assert.equal(a.ingest.heldBatches(), 1);
    assert.equal(a.ingest.countedBefore(), T0, 'the heartbeat must not claim the held batch counted');
    assert.equal(calls.length, 1);

    clock.advance(999);
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    assert.equal(calls.length, 1, 'no retry before retryMs');
    clock.advance(1); // the retry timer fires: Redis still down
    await turns(() => calls.length === 2 && clock.pendingTimers() === 1, 'a failed retry, and the next one scheduled');
    assert.equal(a.ingest.heldBatches(), 1);
    assert.equal(await a.store.get(owner, 'asset-2'), undefined);

    clock.advance(1_000); // Redis answers now
    await turns(() => calls.length === 3, 'a second retry');
    await calls[2];
    await turns(() => a.ingest.heldBatches() === 0, 'the held batch counted');
    assert.equal((await a.store.get(owner, 'asset-2'))?.stats.new, 1);
    assert.equal(a.ingest.countedBefore(), clock.now(), 'nothing held any more');
    assert.equal(clock.pendingTimers(), 0, 'no retry left scheduled');
  });

  test('events Redis dropped (asset limit) are answered as asset_limit_reached, not accepted', async () => {
    const { node, reports } = cluster();
    const a = node('a', (x) => x, 2);
    const body = ndjson(start('l1', 's1', T0), start('l2', 's1', T0), { type: 'error', owner, asset_id: 'l3', session_id: 's1', ts: T0, error_code: 104 }, start('l1', 's2', T0));
    const result = await a.ingest.ingest(body, 'ndjson', auth);
    assert.equal(result.accepted, 3);
    assert.deepEqual(result.rejected.map((r) => [r.index, r.code]), [[2, 'asset_limit_reached']]);
    assert.equal(result.rejected_count, 1);
    assert.equal(reports.length, 0, 'the dropped error event is not reported');
    assert.equal(a.ingest.totals.accepted, 3);
  });

  test('ingest-key batches: the journal keeps the owners accepted, so a rebuild re-derives them whatever the grants are later', async () => {
    const { node, grants } = cluster();
    const a = node('a');
    const customer = `${owner}-customer`;
    const stranger = `${owner}-stranger`;
    grants.allowed = new Set([customer]);
    const body = ndjson(start('g1', 's1', T0), { ...start('g1', 's1', T0), owner: customer }, { ...start('g1', 's1', T0), owner: stranger });
    const result = await a.ingest.ingest(body, 'ndjson', { owner, kind: 'ingest' });
    assert.deepEqual([result.accepted, result.rejected.map((r) => [r.index, r.code])], [2, [[2, 'owner_not_allowed']]]);
    grants.allowed = new Set([stranger]);
    await a.store.clear();
    const rebuilt = await a.rebuild.rebuild();
    assert.ok(rebuilt !== 'busy');
    assert.equal((await a.store.get(customer, 'g1'))?.stats.new, 1, 'accepted then, replayed now');
    assert.equal(await a.store.get(stranger, 'g1'), undefined, 'refused then, still refused');
    assert.equal((await a.store.get(owner, 'g1'))?.stats.new, 1);
  });

  test('after the Redis state is wiped, a rebuild from the journal gives exactly the same answers', async () => {
    const { clock, node } = cluster();
    const a = node('a');
    const b = node('b');
    const random = seededRandom(11);
    const assets = ['r0', 'r1', 'r2', 'r3'];
    for (let i = 0; i < 40; i++) {
      clock.advance(Math.floor(random() * 30_000));
      const events = Array.from({ length: 1 + Math.floor(random() * 5) }, () => {
        const type = ['start', 'manifest', 'request', 'error', 'ad'][Math.floor(random() * 5)] as string;
        return {
          type,
          owner,
          asset_id: assets[Math.floor(random() * assets.length)],
          session_id: `s${Math.floor(random() * 6)}`,
          ts: clock.now() - Math.floor(random() * (random() < 0.2 ? 900_000 : 60_000)),
          ...(type === 'manifest' || type === 'ad' ? { latency_ms: Math.floor(random() * 3000) / 7 } : {}),
          ...(type === 'error' ? { error_code: 104 } : {}),
        };
      });
      const result = await (i % 2 === 0 ? a : b).ingest.ingest(ndjson(...events), 'ndjson', auth);
      assert.deepEqual(result, { accepted: events.length, rejected: [], rejected_count: 0 });
    }
    const observe = async (store: StatsStore) => [await store.top(owner, 100), await store.summary(owner), await store.search(owner, assets)];
    const before = await observe(b.store);
    assert.equal(await a.rebuild.needed(), true, 'nothing marked the store as built yet');
    await a.store.clear();
    assert.deepEqual(await a.store.search(owner, assets), []);
    const result = await a.rebuild.rebuild();
    assert.equal(result !== 'busy' && result.batches >= 40, true, `every batch replayed: ${JSON.stringify(result)}`);
    assert.deepEqual(await observe(b.store), before);
    assert.equal(await a.rebuild.needed(), false);

    // While a rebuild runs, ingest keeps accepting and counts afterwards, exactly once.
    await a.client.set(a.rebuild.flagKey, 'someone', 'PX', 60_000);
    assert.equal(await b.rebuild.rebuild(), 'busy');
    clock.advance(1_000);
    await a.ingest.ingest(ndjson(start('r9', 's1', clock.now())), 'ndjson', auth);
    assert.equal(await a.store.get(owner, 'r9'), undefined);
    await a.client.del(a.rebuild.flagKey);
    await a.ingest.retryHeld();
    await a.ingest.retryHeld();
    assert.equal((await b.store.get(owner, 'r9'))?.stats.new, 1);
    const withR9 = await observe(b.store);
    await a.store.clear();
    await b.rebuild.rebuild();
    assert.deepEqual(await observe(a.store), withR9);
  });

  test('batches a dead instance journaled but never counted are counted by a survivor, once', async () => {
    const { clock, node } = cluster();
    const dead = node('dead');
    const survivor = node('survivor');
    await survivor.rebuild.markStarted(); // a running cluster (else the first tick starts a rebuild)
    assert.equal((await survivor.binding.check()).kind, 'bound');
    await dead.membership.tick(); // registered: counted everything before T0
    await dead.journal.appendNew({ receivedAt: clock.now(), kind: 'ndjson', authOwner: owner, owners: [owner], body: ndjson(start('d1', 's1', T0)), events: 1 });
    // ... and was killed before counting it.
    await survivor.membership.tick();
    assert.equal(await survivor.store.get(owner, 'd1'), undefined, 'a live instance is left alone');
    clock.advance(16_000);
    assert.deepEqual(await survivor.membership.sweepDead(), [dead.id]);
    assert.equal((await survivor.store.get(owner, 'd1'))?.stats.new, 1);
    assert.deepEqual(await survivor.membership.sweepDead(), [], 'the dead instance left the registry');
    assert.deepEqual(Object.keys(await survivor.client.hgetall(`${survivor.id.replace(/survivor$/, '')}cluster:instances`)), [survivor.id]);
  });
});
