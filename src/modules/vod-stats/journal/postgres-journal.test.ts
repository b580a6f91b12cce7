import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { testEngines, type TestStorage } from '../../../../test/helpers/engines.js';
import { sql } from 'kysely';
import type { NewBatch, StoredBatch } from './cluster-journal.js';
import { batchesOfInstance } from './journal.repository.js';
import { PostgresEventJournal } from './postgres-journal.js';

const T0 = Date.UTC(2026, 10, 21, 10, 0);

const newBatch = (n: number, body: Buffer = Buffer.from(`{"n":${n}}\n`)): NewBatch => ({
  receivedAt: T0 + n,
  kind: n % 2 === 0 ? 'json' : 'ndjson',
  authOwner: `ws-${n % 3}-é`,
  owners: n % 5 === 0 ? null : [`ws-${n % 3}-é`],
  body,
  events: n,
});

for (const engine of await testEngines()) {
  describe(`ingest journal on ${engine.engine}`, { skip: engine.skip }, () => {
    let s: TestStorage;
    before(async () => {
      s = await engine.open();
    });
    after(() => s.cleanup());
    const journalOf = (instanceId: string, options: { maxInFlight?: number } = {}) =>
      new PostgresEventJournal({ db: s.storage.db, instanceId, ...options });
    const all = async () => {
      const seen: StoredBatch[] = [];
      await journalOf('reader').replayFrom(0, 0, (b) => void seen.push(b));
      return seen;
    };

    test('a batch is committed when appendNew resolves and replays byte for byte, in journal order', async () => {
      const journal = journalOf('node-a');
      const binary = Buffer.from([0x7b, 0x00, 0xff, 0xfe, 0x0a, 0xc3, 0x28]);
      const { seq: seqA, batchKey } = await journal.appendNew(newBatch(1));
      const { seq: seqB } = await journal.appendNew(newBatch(2, binary));
      assert.ok(seqB > seqA);
      assert.match(batchKey, new RegExp(`^${seqA}:[0-9a-f]{12}$`), 'counted under its seq and a token of its own');
      const [a, b] = await all();
      assert.deepEqual(a, { ...newBatch(1), seq: seqA, instanceId: 'node-a', batchKey });
      assert.deepEqual(b?.body, binary, 'NUL and invalid UTF-8 bytes survive');
      assert.deepEqual([b?.kind, b?.authOwner, b?.owners, b?.events], ['json', 'ws-2-é', ['ws-2-é'], 2]);
      const { seq: granted } = await journal.appendNew({ ...newBatch(4), owners: ['ws-1-é', 'customer'] });
      const { seq: any } = await journal.appendNew({ ...newBatch(6), owners: null });
      const [, , c, d] = await all();
      assert.deepEqual([c?.seq, c?.owners, d?.seq, d?.owners], [granted, ['ws-1-é', 'customer'], any, null], 'the owners a batch could name');
      await journal.close();
      await assert.rejects(journal.appendNew(newBatch(3)), /closed/);
    });

    test('concurrent appends share INSERTs, and each resolves with the seq of its own row', async () => {
      const journal = journalOf('node-b', { maxInFlight: 2 });
      const bodies = Array.from({ length: 120 }, (_, i) => Buffer.from(`{"i":${i}}`));
      const seqs = (await Promise.all(bodies.map((body, i) => journal.appendNew(newBatch(100 + i, body))))).map((j) => j.seq);
      assert.equal(journal.counters.appends, 120);
      // The first two go alone (two in flight); the other 118, queued meanwhile, share the third INSERT.
      assert.equal(journal.counters.inserts, 3);
      assert.equal(new Set(seqs).size, 120);
      const stored = new Map((await all()).map((b) => [b.seq, b.body.toString()]));
      seqs.forEach((seq, i) => assert.equal(stored.get(seq), bodies[i]?.toString()));
      const mine = await batchesOfInstance(s.storage.db, 'node-b', 0, 0, 1000);
      assert.equal(mine.length, 120);
      await journal.close();
    });

    test('retention deletes the batches received before the cutoff, and only those', async () => {
      const journal = journalOf('node-c');
      const before = (await all()).length;
      const { seq: old } = await journal.appendNew({ ...newBatch(7), receivedAt: T0 - 30 * 3600_000 });
      const { seq: recent } = await journal.appendNew({ ...newBatch(8), receivedAt: T0 });
      assert.equal(await journal.deleteBefore(T0 - 25 * 3600_000, 1), 1);
      const seqs = (await all()).map((b) => b.seq);
      assert.equal(seqs.length, before + 1);
      assert.ok(!seqs.includes(old) && seqs.includes(recent));
      await journal.close();
    });

    test('the binding: a deployment id named on first use, an epoch that only moves forward', async () => {
      const journal = journalOf('node-d');
      const first = await journal.binding();
      assert.match(first.deploymentId, /^[0-9a-f]{32}$/);
      assert.deepEqual(await journalOf('node-e').binding(), first, 'every instance reads the same');
      const next = await journal.nextEpoch();
      assert.equal(next.deploymentId, first.deploymentId);
      assert.ok(next.epoch > first.epoch);
      assert.deepEqual(await journal.binding(), next);
    });

    test('the snapshot table of the unused embedded-on-database journal is dropped by a migration', async () => {
      await assert.rejects(sql`select count(*) from vod_stats_snapshots`.execute(s.storage.db), /vod_stats_snapshots/);
      await sql`select count(*) from vod_stats_journal`.execute(s.storage.db);
    });
  });
}
