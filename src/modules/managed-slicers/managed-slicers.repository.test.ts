import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { testEngines, type TestStorage } from '../../../test/helpers/engines.js';
import type { SlicerConfig, TaskOperation } from './managed-slicers.schema.js';
import { SlicerRepository } from './managed-slicers.repository.js';
import { SlicerTaskQueue } from './task-queue.repository.js';
import { InMemorySlicerStore } from './memory-slicer-store.test-support.js';
import type { SealedStreamKey, SlicerStore, SlicerTaskStore, StreamKeyStore } from './slicer-store.js';

/**
 * One contract, every implementation: the in-memory fake used by the unit tests must behave
 * like the Kysely repositories (the service's SlicerRepository, the runner's SlicerTaskQueue)
 * on SQLite and PostgreSQL.
 */
interface Opened {
  store: SlicerStore & StreamKeyStore;
  queue: SlicerTaskStore;
  workspaces: (ids: string[]) => Promise<void>;
  /** Makes the slicer look made before stream keys existed (the migration leaves their key null). */
  forgetStreamKey: (slicerId: string) => Promise<void>;
  close(): Promise<void>;
}

const config: SlicerConfig = { name: 'Main', description: 'Studio A', region: 'eu-central-1', ingest_protocol: 'srt', output_profile: 'hd-720p' };
const T0 = Date.UTC(2026, 10, 21, 10, 0, 0);
let n = 0;
const uuid = () => `00000000-0000-4000-8000-${(++n).toString(16).padStart(12, '0')}`;
const hex = () => (++n).toString(16).padStart(32, '0');
// The store keeps sealed keys as opaque text: no box needed to check it keeps the right one.
const sealed = (name: string) => `v1:sealed-${name}` as SealedStreamKey;

function contract(open: () => Promise<Opened>) {
  let store: SlicerStore & StreamKeyStore;
  let queue: SlicerTaskStore;
  let forgetStreamKey: (slicerId: string) => Promise<void>;
  let close: () => Promise<void>;
  const W = 'ws-a';
  const OTHER = 'ws-b';
  before(async () => {
    const opened = await open();
    store = opened.store;
    queue = opened.queue;
    forgetStreamKey = opened.forgetStreamKey;
    close = () => opened.close();
    await opened.workspaces([W, OTHER]);
  });
  after(() => close());

  const newSlicer = (workspaceId = W, at = T0, name = config.name) =>
    store.createSlicer({ id: hex(), workspaceId, config: { ...config, name }, createdAt: at, sealedStreamKey: sealed(name) }, { id: uuid(), operation: 'CREATE', createdAt: at });
  const enqueue = (slicerId: string, operation: TaskOperation, configPatch?: Partial<SlicerConfig>, workspaceId = W, sealedStreamKey?: SealedStreamKey) =>
    store.enqueueTask({ workspaceId, slicerId, task: { id: uuid(), operation, createdAt: T0 + 1 }, ...(configPatch ? { configPatch } : {}), ...(sealedStreamKey ? { sealedStreamKey } : {}) });
  const drain = async (owner: string, now: number) => {
    for (;;) {
      const t = await queue.claimNextTask({ owner, now, leaseMs: 1000 });
      if (!t) return;
      await queue.finishTask({ taskId: t.id, fence: { owner, attempt: t.attempts }, state: 'COMPLETED', failureReason: null, ingestUrl: undefined, now });
    }
  };

  test('a created slicer reads back with its configuration and PENDING CREATE task', async () => {
    const { slicer, task } = await newSlicer();
    const found = await store.findSlicer(W, slicer.id);
    assert.deepEqual(found?.slicer.config, config);
    assert.equal(found?.slicer.state, 'provisioning');
    assert.equal(found?.slicer.ingestUrl, null);
    assert.equal(found?.task.id, task.id);
    assert.equal(found?.task.state, 'PENDING');
    assert.deepEqual(found?.task.config, config);
    assert.equal(await store.findSlicer(OTHER, slicer.id), undefined);
    assert.equal(await store.findTask(OTHER, task.id), undefined);
    assert.equal((await store.findTask(W, task.id))?.createdAt, T0);
  });

  test('enqueue merges the patch, refuses other workspaces and anything after a DELETE', async () => {
    const { slicer } = await newSlicer();
    const updated = await enqueue(slicer.id, 'UPDATE', { output_profile: 'uhd-2160p' });
    assert.equal(updated.kind, 'enqueued');
    if (updated.kind !== 'enqueued') return;
    assert.equal(updated.slicer.config.output_profile, 'uhd-2160p');
    assert.equal(updated.slicer.config.name, 'Main');
    assert.equal(updated.task.config.output_profile, 'uhd-2160p');
    assert.equal(updated.slicer.state, 'provisioning', 'the CREATE is still at the head of the queue');
    assert.equal(updated.slicer.latestTaskId, updated.task.id);
    assert.deepEqual(await enqueue(slicer.id, 'RESTART', undefined, OTHER), { kind: 'not_found' });
    assert.deepEqual(await enqueue('missing', 'RESTART'), { kind: 'not_found' });
    assert.equal((await enqueue(slicer.id, 'DELETE')).kind, 'enqueued');
    assert.deepEqual(await enqueue(slicer.id, 'RESTART'), { kind: 'deletion_pending' });
  });

  test('claims hand out only the head of each slicer, oldest first, and follow the state machine', async () => {
    await drain('cleaner', T0);
    const one = await newSlicer();
    const two = await newSlicer();
    const update = await enqueue(one.slicer.id, 'UPDATE', { name: 'One' });
    const first = await queue.claimNextTask({ owner: 'x', now: T0, leaseMs: 1000 });
    const second = await queue.claimNextTask({ owner: 'x', now: T0, leaseMs: 1000 });
    assert.deepEqual([first?.id, second?.id], [one.task.id, two.task.id]);
    assert.equal(first?.state, 'IN_PROGRESS');
    assert.equal(first?.attempts, 1);
    assert.equal(first?.resumed, false);
    assert.equal(await queue.claimNextTask({ owner: 'x', now: T0, leaseMs: 1000 }), undefined, 'UPDATE waits for CREATE');
    assert.ok(first);
    assert.equal(
      await queue.finishTask({ taskId: first.id, fence: { owner: 'x', attempt: 1 }, state: 'COMPLETED', failureReason: null, ingestUrl: 'srt://a', now: T0 + 5 }),
      true,
    );
    const found = await store.findSlicer(W, one.slicer.id);
    assert.equal(found?.slicer.state, 'updating', 'the UPDATE is now at the head');
    assert.equal(found?.slicer.ingestUrl, 'srt://a');
    const third = await queue.claimNextTask({ owner: 'x', now: T0, leaseMs: 1000 });
    assert.equal(update.kind === 'enqueued' && third?.id, update.kind === 'enqueued' && update.task.id);
    assert.equal(
      await queue.finishTask({ taskId: first.id, fence: { owner: 'x', attempt: 1 }, state: 'FAILED', failureReason: 'x', ingestUrl: undefined, now: T0 }),
      false,
      'a finished task cannot change again',
    );
    assert.ok(third && second);
    await queue.finishTask({ taskId: third.id, fence: { owner: 'x', attempt: 1 }, state: 'FAILED', failureReason: 'boom', ingestUrl: undefined, now: T0 + 6 });
    const failed = await store.findTask(W, third.id);
    assert.equal(failed?.state, 'FAILED');
    assert.equal(failed?.failureReason, 'boom');
    assert.equal(failed?.finishedAt, T0 + 6);
    assert.equal((await store.findSlicer(W, one.slicer.id))?.slicer.state, 'failed');
    await queue.finishTask({ taskId: second.id, fence: { owner: 'x', attempt: 1 }, state: 'COMPLETED', failureReason: null, ingestUrl: null, now: T0 });
  });

  test('leases: respected while valid, taken over after expiry, fenced, released on restart', async () => {
    await drain('cleaner', T0);
    const { task } = await newSlicer();
    const a = await queue.claimNextTask({ owner: 'node-a', now: T0, leaseMs: 1000 });
    assert.equal(a?.id, task.id);
    assert.equal(await queue.claimNextTask({ owner: 'node-b', now: T0 + 999, leaseMs: 1000 }), undefined);
    assert.equal(await queue.renewLease(task.id, { owner: 'node-a', attempt: 1 }, T0 + 2000), true);
    assert.equal(await queue.claimNextTask({ owner: 'node-b', now: T0 + 1500, leaseMs: 1000 }), undefined);
    const b = await queue.claimNextTask({ owner: 'node-b', now: T0 + 2000, leaseMs: 1000 });
    assert.equal(b?.id, task.id);
    assert.equal(b?.resumed, true);
    assert.equal(b?.attempts, 2);
    assert.equal(await queue.renewLease(task.id, { owner: 'node-a', attempt: 1 }, T0 + 9000), false, 'the old holder is fenced off');
    const stale = { taskId: task.id, fence: { owner: 'node-a', attempt: 1 }, state: 'COMPLETED' as const, failureReason: null, ingestUrl: undefined, now: T0 };
    assert.equal(await queue.finishTask(stale), false);
    assert.equal(await queue.releaseLeases(T0 + 2100, 'node-a'), 0, 'node-a holds nothing any more');
    assert.equal(await queue.releaseLeases(T0 + 2100, 'node-b'), 1);
    const again = await queue.claimNextTask({ owner: 'node-b', now: T0 + 2100, leaseMs: 1000 });
    assert.equal(again?.attempts, 3);
    assert.ok(again);
    assert.equal(await queue.releaseLease(task.id, { owner: 'node-b', attempt: 3 }, T0 + 2200), true);
    const last = await queue.claimNextTask({ owner: 'node-c', now: T0 + 2200, leaseMs: 1000 });
    assert.equal(last?.attempts, 4);
    await queue.finishTask({ taskId: task.id, fence: { owner: 'node-c', attempt: 4 }, state: 'COMPLETED', failureReason: null, ingestUrl: null, now: T0 + 2300 });
    assert.equal((await store.findTask(W, task.id))?.state, 'COMPLETED');
  });

  test('racing claimers never get the same task', async () => {
    await drain('cleaner', T0);
    const created = await Promise.all([1, 2, 3, 4].map((i) => newSlicer(W, T0, `race ${i}`)));
    const claims = await Promise.all(
      Array.from({ length: 8 }, (_, i) => queue.claimNextTask({ owner: `node-${i}`, now: T0, leaseMs: 1000 })),
    );
    const ids = claims.flatMap((c) => (c ? [c.id] : []));
    assert.equal(new Set(ids).size, ids.length, 'no task handed out twice');
    assert.deepEqual([...ids].sort(), created.map((c) => c.task.id).sort());
    await Promise.all(
      claims.flatMap((c) =>
        c ? [queue.finishTask({ taskId: c.id, fence: { owner: c.leaseOwner ?? '', attempt: 1 }, state: 'COMPLETED', failureReason: null, ingestUrl: null, now: T0 })] : [],
      ),
    );
  });

  test('a completed DELETE removes the slicer from reads; its tasks stay listed', async () => {
    await drain('cleaner', T0);
    const { slicer } = await newSlicer(OTHER);
    await enqueue(slicer.id, 'DELETE', undefined, OTHER);
    await drain('x', T0 + 10);
    assert.equal(await store.findSlicer(OTHER, slicer.id), undefined);
    assert.equal((await store.listSlicers(OTHER, 10)).items.some((s) => s.slicer.id === slicer.id), false);
    const tasks = await store.listTasks(OTHER, { slicerId: slicer.id }, 10);
    assert.deepEqual(tasks.items.map((t) => `${t.operation}:${t.state}`), ['DELETE:COMPLETED', 'CREATE:COMPLETED']);
    assert.deepEqual(await enqueue(slicer.id, 'RESTART', undefined, OTHER), { kind: 'not_found' });
  });

  test('lists: newest first, filters, totals over all pages, keyset pages', async () => {
    const before = (await store.listTasks(W, {}, 1000)).total;
    const a = await newSlicer(W, T0 + 100, 'list a');
    const b = await newSlicer(W, T0 + 100, 'list b');
    await enqueue(a.slicer.id, 'RESTART');
    const all = await store.listTasks(W, {}, 1000);
    assert.equal(all.total, before + 3);
    assert.deepEqual(all.items.slice(0, 3).map((t) => t.operation), ['RESTART', 'CREATE', 'CREATE']);
    assert.ok(all.items.every((t, i, list) => i === 0 || (list[i - 1]?.seq ?? 0) > t.seq));
    const unbounded = await store.listTasks(W, {}, undefined);
    assert.deepEqual(unbounded.items.map((t) => t.id), all.items.map((t) => t.id), 'no limit: every task');
    assert.equal(unbounded.total, all.total);
    const afterFirst = await store.listTasks(W, {}, undefined, all.items[0]?.seq);
    assert.deepEqual(afterFirst.items.map((t) => t.id), all.items.slice(1).map((t) => t.id));
    const page = await store.listTasks(W, { operation: 'CREATE', state: 'PENDING' }, 1);
    assert.equal(page.total, 2);
    assert.equal(page.items[0]?.id, b.task.id);
    const next = await store.listTasks(W, { operation: 'CREATE', state: 'PENDING' }, 1, page.items[0]?.seq);
    assert.equal(next.items[0]?.id, a.task.id);
    assert.equal(next.total, 2);
    assert.equal((await store.listTasks(W, { slicerId: a.slicer.id }, 10)).total, 2);
    assert.equal((await store.listTasks(OTHER, { slicerId: a.slicer.id }, 10)).total, 0);

    const slicers = await store.listSlicers(W, 2);
    const expectedFirst = [a.slicer.id, b.slicer.id].sort().reverse();
    assert.deepEqual(slicers.items.map((s) => s.slicer.id), expectedFirst);
    const last = slicers.items[1]?.slicer;
    assert.ok(last);
    const rest = await store.listSlicers(W, 100, { createdAt: last.createdAt, id: last.id });
    assert.equal(slicers.total, rest.items.length + 2);
    assert.ok(rest.items.every((s) => s.slicer.createdAt < T0 + 100));
    const listedA = slicers.items.find((s) => s.slicer.id === a.slicer.id);
    assert.equal(listedA?.task.operation, 'RESTART', 'each slicer comes with its latest task');
  });

  test('a slicer keeps its sealed stream key: stored at create, replaced only by an enqueue that carries a new one', async () => {
    const { slicer } = await newSlicer(W, T0, 'keyed');
    assert.equal(slicer.sealedStreamKey, sealed('keyed'));
    assert.equal((await store.findSlicer(W, slicer.id))?.slicer.sealedStreamKey, sealed('keyed'));
    assert.equal((await store.listSlicers(W, 1000)).items.find((s) => s.slicer.id === slicer.id)?.slicer.sealedStreamKey, sealed('keyed'));
    assert.equal((await enqueue(slicer.id, 'RESTART')).kind, 'enqueued');
    assert.equal(await store.streamKeyOf(slicer.id), sealed('keyed'), 'a plain restart leaves the key');

    const rotated = await enqueue(slicer.id, 'RESTART', undefined, W, sealed('rotated'));
    assert.ok(rotated.kind === 'enqueued');
    assert.equal(rotated.slicer.sealedStreamKey, sealed('rotated'));
    assert.equal((await store.findSlicer(W, slicer.id))?.slicer.sealedStreamKey, sealed('rotated'));

    assert.equal((await enqueue(slicer.id, 'RESTART', undefined, OTHER, sealed('theirs'))).kind, 'not_found');
    await enqueue(slicer.id, 'DELETE');
    assert.equal((await enqueue(slicer.id, 'RESTART', undefined, W, sealed('late'))).kind, 'deletion_pending');
    assert.equal(await store.streamKeyOf(slicer.id), sealed('rotated'), 'a refused enqueue changes no key');
  });

  test('a slicer without a stream key (made before keys) gets the first key filled in, and keeps it', async () => {
    const { slicer } = await newSlicer(W, T0, 'legacy');
    await forgetStreamKey(slicer.id);
    assert.equal(await store.streamKeyOf(slicer.id), null);
    assert.equal((await store.findSlicer(W, slicer.id))?.slicer.sealedStreamKey, null);
    assert.equal(await store.fillStreamKey(slicer.id, sealed('first')), sealed('first'));
    assert.equal(await store.fillStreamKey(slicer.id, sealed('second')), sealed('first'), 'a later reader gets the first key');
    assert.equal((await store.findSlicer(W, slicer.id))?.slicer.sealedStreamKey, sealed('first'));
    assert.equal(await store.streamKeyOf('no-such-slicer'), undefined);
    assert.equal(await store.fillStreamKey('no-such-slicer', sealed('x')), undefined);
  });
}

describe('slicer store contract on the in-memory fake', () => {
  contract(async () => {
    const both = new InMemorySlicerStore();
    return { store: both, queue: both, workspaces: async () => undefined, forgetStreamKey: async (id) => both.forgetStreamKey(id), close: async () => undefined };
  });
});

for (const engine of await testEngines()) {
  describe(`slicer repository on ${engine.engine}`, { skip: engine.skip }, () => {
    contract(async () => {
      const s: TestStorage = await engine.open();
      return {
        store: new SlicerRepository(s.storage.db, s.storage.engine),
        queue: new SlicerTaskQueue(s.storage.db, s.storage.engine),
        workspaces: async (ids) => {
          for (const id of ids) await s.storage.db.insertInto('workspaces').values({ id, name: id, created_at: T0 }).execute();
        },
        forgetStreamKey: async (id) => {
          await s.storage.db.updateTable('managed_slicers').set({ stream_key_sealed: null }).where('id', '=', id).execute();
        },
        close: () => s.cleanup(),
      };
    });
  });
}
