import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { openSqliteForTest, type TestStorage } from '../../../test/helpers/engines.js';
import { FakeClock } from '../../platform/clock.js';
import { assetWorkDir } from '../../platform/media/media-layout.js';
import { MAX_RENDITIONS, writeManifest, type PackagedManifest, type PackagedRendition } from '../../platform/media/packaged-manifest.js';
import { AssetFiles } from './asset-files.js';
import type { AssetPackager, PackagingJob, PackagingOutcome } from './asset-packager.js';
import type { LeaseFence, PackagedResult } from './asset-store.js';
import { AssetRepository } from './assets.repository.js';
import { DELETION_CHECK_MS, PackagingRunner } from './packaging-runner.js';
import type { OperationalEventData, OperationalEventSink } from '../../platform/operational-events.js';
import { Value } from '@sinclair/typebox/value';
import { operationalEventData } from '../webhooks/webhooks.schema.js';

const LEASE = 30_000;
const WS = 'c'.repeat(32);
const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** Bounded wait for background work that does real file I/O (asserts no duration). */
async function eventually(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await condition()) return;
    await delay(5);
  }
  throw new Error(`never: ${what}`);
}

interface Call {
  job: PackagingJob;
  /** What the work directory held when the attempt began. */
  startedWith: string[];
  settle(outcome: PackagingOutcome): void;
}

/** A packager the test drives: each call writes a partial file, then waits to be settled or aborted. */
class ManualPackager implements AssetPackager {
  readonly calls: Call[] = [];
  package(job: PackagingJob): Promise<PackagingOutcome> {
    const startedWith = readdirSync(job.workDir);
    writeFileSync(join(job.workDir, 'partial.m4s'), 'partial');
    return new Promise((resolve) => {
      job.signal.addEventListener('abort', () => resolve({ kind: 'aborted' }), { once: true });
      this.calls.push({ job, startedWith, settle: resolve });
    });
  }
}

const rendition = (name: string, height: number): PackagedRendition => ({
  name, width: Math.round((height * 16) / 9), height, bandwidth: 300_000, average_bandwidth: 250_000, codecs: 'avc1.64000d,mp4a.40.2',
  playlist: `${name}/playlist.m3u8`, init: `${name}/init.mp4`, segments: [0, 1].map((i) => ({ uri: `${name}/seg_0000${i}.m4s`, duration_s: 4, bytes: 7 })),
});

const manifest: PackagedManifest = { version: 1, duration_s: 8, segment_s: 4, poster: 'poster.jpg', renditions: [{ ...rendition('180p', 180), width: 320 }] };

/** The repository, noting every asset it is asked to make ready. */
class WatchedRepository extends AssetRepository {
  readonly madeReady: string[] = [];
  override finishReady(assetId: string, fence: LeaseFence, result: PackagedResult, now: number): Promise<boolean> {
    this.madeReady.push(assetId);
    return super.finishReady(assetId, fence, result, now);
  }
}

describe('packaging runner', () => {
  let s: TestStorage;
  let repo: WatchedRepository;
  let files: AssetFiles;
  let clock: FakeClock;
  let n = 0;
  const runners: PackagingRunner[] = [];

  before(async () => {
    s = await openSqliteForTest();
    repo = new WatchedRepository(s.storage.db);
    files = new AssetFiles(join(s.dataDir, 'media'));
    await files.prepare();
    await s.storage.db.insertInto('workspaces').values({ id: WS, name: 'W', created_at: 0 }).execute();
  });
  afterEach(async () => {
    for (const r of runners.splice(0)) await r.stop();
    await s.storage.db.deleteFrom('assets').execute();
  });
  after(() => s.cleanup());

  const runner = (packager: AssetPackager, options: { owner?: string; exclusive?: boolean; maxAttempts?: number; failed?: () => void; events?: OperationalEventSink } = {}) => {
    const r = new PackagingRunner({
      store: repo, packager, files, clock, log: silent, ownerId: options.owner ?? 'here', exclusive: options.exclusive ?? true,
      concurrency: 1, leaseMs: LEASE, pollMs: null, ...(options.maxAttempts ? { maxAttempts: options.maxAttempts } : {}),
      ...(options.failed ? { onFailed: options.failed } : {}),
      ...(options.events ? { events: options.events } : {}),
    });
    runners.push(r);
    return r;
  };

  const upload = async () => {
    const id = (++n).toString(16).padStart(32, '0');
    const temp = files.newUploadPath();
    await writeFile(temp, 'media bytes');
    await files.adoptUpload(temp, WS, id);
    await repo.insertWithJob({ id, workspaceId: WS, title: null, sizeBytes: 11, createdAt: clock.now() + n });
    return id;
  };
  const state = async (id: string) => (await repo.find(WS, id))?.state;

  before(() => {
    clock = new FakeClock();
  });

  test('one job at a time, oldest first; progress recorded; ready publishes the layout and drops the upload', async () => {
    const packager = new ManualPackager();
    const first = await upload();
    const second = await upload();
    const r = runner(packager);
    await r.start();
    await eventually(() => packager.calls.length === 1, 'the first job running');
    assert.equal(packager.calls[0]?.job.assetId, first);
    assert.deepEqual(packager.calls[0]?.startedWith, [], 'an empty work directory');
    assert.equal(await state(first), 'processing');
    assert.equal(await state(second), 'uploaded', 'concurrency 1: the second waits');

    packager.calls[0]?.job.onProgress(42);
    await eventually(async () => (await repo.find(WS, first))?.progress === 42, 'progress recorded');
    const call = packager.calls[0];
    assert.ok(call);
    await mkdir(join(call.job.workDir, '180p'));
    await writeManifest(call.job.workDir, manifest);
    call.settle({ kind: 'packaged' });

    await eventually(async () => (await state(first)) === 'ready', 'the first ready');
    const ready = await repo.find(WS, first);
    assert.equal(ready?.durationMs, 8000);
    assert.deepEqual(ready?.renditions, [{ name: '180p', width: 320, height: 180, bandwidth: 300_000 }]);
    assert.deepEqual(readdirSync(files.assetDir(WS, first)).sort(), ['180p', 'manifest.json', 'partial.m4s']);
    await eventually(async () => !(await files.hasSource(WS, first)), 'the upload removed once ready');
    assert.equal(existsSync(assetWorkDir(files.root, WS, first)), false);
    await eventually(() => packager.calls.length === 2, 'then the second');
    assert.equal(packager.calls[1]?.job.assetId, second);
  });

  test('asset.ready and asset.failed are emitted once each, as the asset becomes ready or failed', async () => {
    const packager = new ManualPackager();
    const emitted: Array<[string, string, OperationalEventData]> = [];
    const ready = await upload();
    const failed = await upload();
    const r = runner(packager, { events: { emit: (owner, type, data) => void emitted.push([owner, type, data]) } });
    await r.start();
    await eventually(() => packager.calls.length === 1, 'the first running');
    const call = packager.calls[0];
    assert.ok(call);
    assert.equal(emitted.length, 0, 'nothing while it runs');
    await mkdir(join(call.job.workDir, '180p'));
    await writeManifest(call.job.workDir, manifest);
    call.settle({ kind: 'packaged' });
    await eventually(() => packager.calls.length === 2, 'the second running');
    packager.calls[1]?.settle({ kind: 'failed', reason: 'The file has no video stream' });
    await eventually(() => emitted.length === 2, 'both emitted');
    assert.deepEqual(emitted, [
      [WS, 'asset.ready', { asset_id: ready, duration_ms: 8000, renditions: ['180p'] }],
      [WS, 'asset.failed', { asset_id: failed, reason: 'The file has no video stream' }],
    ]);
    assert.equal(await state(ready), 'ready');
    // The data as the OpenAPI document describes it.
    for (const [owner, type, data] of emitted) assert.ok(Value.Check(operationalEventData[type as 'asset.ready' | 'asset.failed'], { owner, ...data }), type);
  });

  test('issue 36: a failure keeps the upload (counted in storage) and nothing else; queued again, the same upload is packaged to ready', async () => {
    const packager = new ManualPackager();
    let failures = 0;
    const id = await upload();
    const r = runner(packager, { failed: () => failures++ });
    await r.start();
    await eventually(() => packager.calls.length === 1, 'running');
    packager.calls[0]?.settle({ kind: 'failed', reason: 'The file has no video stream' });
    await eventually(() => failures === 1, 'failed and counted');
    assert.equal(await state(id), 'failed');
    const failed = await repo.find(WS, id);
    assert.equal(failed?.failureReason, 'The file has no video stream');
    await eventually(() => r.runningCount() === 0, 'cleaned up');
    assert.equal(await files.hasSource(WS, id), true, 'the upload is kept for a retry');
    const stored = await s.storage.db.selectFrom('assets').select('stored_bytes').where('id', '=', id).executeTakeFirst();
    assert.equal(Number(stored?.stored_bytes), 11, 'and counted in the storage quota');
    assert.equal(existsSync(assetWorkDir(files.root, WS, id)), false);
    assert.equal(existsSync(files.assetDir(WS, id)), false);

    assert.equal(await repo.requeueFailed('d'.repeat(32), id, clock.now()), false, 'not another workspace\'s');
    assert.equal(await repo.requeueFailed(WS, id, clock.now()), true);
    assert.equal(await repo.requeueFailed(WS, id, clock.now()), false, 'queued once');
    assert.equal((await repo.find(WS, id))?.failureReason, null);
    r.notify();
    await eventually(() => packager.calls.length === 2, 'packaged again');
    const again = packager.calls[1];
    assert.ok(again);
    assert.equal(again.job.source, files.sourcePath(WS, id), 'from the same upload');
    assert.deepEqual(again.startedWith, [], 'from scratch');
    await mkdir(join(again.job.workDir, '180p'));
    await writeManifest(again.job.workDir, manifest);
    again.settle({ kind: 'packaged' });
    await eventually(async () => (await state(id)) === 'ready', 'ready after the retry');
    await eventually(async () => !(await files.hasSource(WS, id)), 'the upload removed once ready');
  });

  test('an asset whose manifest the edge would refuse ends failed with the reason, never ready, and keeps only its upload', async () => {
    const packager = new ManualPackager();
    let failures = 0;
    const r = runner(packager, { failed: () => failures++ });
    await r.start();
    // What each packaging leaves in its work directory before it says "packaged".
    const outputs: Array<[string, (dir: string) => Promise<void>, RegExp]> = [
      // One rung more than a manifest holds (finding F1: a 17-rung ladder).
      ['17 renditions', (dir) => writeFile(join(dir, 'manifest.json'), JSON.stringify({ ...manifest, renditions: Array.from({ length: MAX_RENDITIONS + 1 }, (_, i) => rendition(`r${i}`, 1000 - i)) })),
        /^Packaging produced an asset that cannot be played \(manifest\.json breaks the packaged layout at \/renditions: .*16/],
      ['a rendition named twice', (dir) => writeFile(join(dir, 'manifest.json'), JSON.stringify({ ...manifest, renditions: [rendition('180p', 180), rendition('180p', 180)] })),
        /\(manifest\.json names a rendition twice\)$/],
      ['a path out of the asset', (dir) => writeFile(join(dir, 'manifest.json'), JSON.stringify({ ...manifest, renditions: [{ ...rendition('180p', 180), init: '../init.mp4' }] })),
        /at \/renditions\/0\/init: /],
      ['no manifest', () => Promise.resolve(), /\(manifest\.json is missing\)$/],
    ];
    for (const [what, write, reason] of outputs) {
      const id = await upload();
      r.notify();
      await eventually(() => packager.calls.some((c) => c.job.assetId === id), `${what}: running`);
      const call = packager.calls.find((c) => c.job.assetId === id);
      assert.ok(call);
      await write(call.job.workDir);
      call.settle({ kind: 'packaged' });
      await eventually(async () => (await state(id)) === 'failed', `${what}: failed`);
      assert.match((await repo.find(WS, id))?.failureReason ?? '', reason, what);
      assert.equal(repo.madeReady.includes(id), false, `${what}: never made ready`);
      await eventually(() => r.runningCount() === 0, `${what}: cleaned up`);
      assert.equal(existsSync(files.assetDir(WS, id)), false, `${what}: not published`);
      assert.equal(await files.hasSource(WS, id), true, `${what}: the upload kept for a retry`);
    }
    assert.equal(failures, outputs.length);
  });

  test('deleting a running asset stops its packaging and removes its files', async () => {
    const packager = new ManualPackager();
    const id = await upload();
    const r = runner(packager);
    await r.start();
    await eventually(() => packager.calls.length === 1, 'running');
    assert.equal(await repo.delete(WS, id), true);
    await r.cancel(id);
    assert.equal(packager.calls[0]?.job.signal.aborted, true);
    assert.equal(r.runningCount(), 0);
    assert.equal(await files.hasSource(WS, id), false);
    assert.equal(existsSync(assetWorkDir(files.root, WS, id)), false);
  });

  test('a graceful stop gives the job back; the next start packages it again from scratch', async () => {
    const packager = new ManualPackager();
    const id = await upload();
    const r = runner(packager);
    await r.start();
    await eventually(() => packager.calls.length === 1, 'running');
    await r.stop();
    assert.equal(packager.calls[0]?.job.signal.aborted, true);
    assert.equal(await state(id), 'uploaded', 'back in the queue');
    const again = new ManualPackager();
    await runner(again).start();
    await eventually(() => again.calls.length === 1, 'taken up again');
    assert.match(again.calls[0]?.job.workDir ?? '', /attempt-2$/);
    assert.deepEqual(again.calls[0]?.startedWith, []);
  });

  test('after a crash (no stop), an embedded start takes the job back and starts from scratch: earlier output removed first', async () => {
    const crashed = new ManualPackager();
    const id = await upload();
    const dead = new PackagingRunner({ store: repo, packager: crashed, files, clock, log: silent, ownerId: 'dead', exclusive: true, concurrency: 1, leaseMs: LEASE, pollMs: null });
    await dead.start();
    await eventually(() => crashed.calls.length === 1, 'running before the crash');
    const leftover = crashed.calls[0]?.job.workDir ?? '';
    assert.ok(existsSync(join(leftover, 'partial.m4s')));
    // The process dies here: its runner never stops, its lease never expires by itself.

    const packager = new ManualPackager();
    await runner(packager).start();
    await eventually(() => packager.calls.length === 1, 'taken back at once');
    assert.equal(existsSync(leftover), false, 'the interrupted attempt\'s output is gone');
    assert.deepEqual(packager.calls[0]?.startedWith, []);
    await mkdir(join(packager.calls[0]?.job.workDir ?? '', '180p'));
    await writeManifest(packager.calls[0]?.job.workDir ?? '', manifest);
    packager.calls[0]?.settle({ kind: 'packaged' });
    await eventually(async () => (await state(id)) === 'ready', 'ready after the restart');
    crashed.calls[0]?.settle({ kind: 'aborted' });
  });

  test('a job interrupted too often is failed instead of packaged again', async () => {
    const id = await upload();
    for (let i = 0; i < 3; i++) await repo.claimNext({ owner: `crashed-${i}`, now: clock.now() + i * LEASE * 2, leaseMs: LEASE });
    clock.advance(10 * LEASE);
    const packager = new ManualPackager();
    const r = runner(packager, { maxAttempts: 3, exclusive: false });
    await r.start();
    await eventually(async () => (await state(id)) === 'failed', 'failed');
    assert.match((await repo.find(WS, id))?.failureReason ?? '', /interrupted 3 times/);
    assert.equal(await files.hasSource(WS, id), true, 'the upload kept for a retry');
    assert.equal(packager.calls.length, 0);
  });

  test('a lease lost to another instance stops the run and leaves the job to its new holder; one lost to a deletion removes the files', async () => {
    const packager = new ManualPackager();
    const taken = await upload();
    const r = runner(packager, { exclusive: false });
    await r.start();
    await eventually(() => packager.calls.length === 1, 'running');
    // Another instance took the job over (its lease had expired while this one was stuck).
    await s.storage.db.updateTable('asset_jobs').set({ lease_owner: 'other', attempts: 2 }).where('asset_id', '=', taken).execute();
    clock.advance(LEASE / 3);
    await eventually(() => r.runningCount() === 0, 'stopped');
    assert.equal(packager.calls[0]?.job.signal.aborted, true);
    assert.equal(await files.hasSource(WS, taken), true, 'the new holder needs the upload');
    await s.storage.db.deleteFrom('assets').where('id', '=', taken).execute();

    const deleted = await upload();
    r.notify();
    await eventually(() => packager.calls.length === 2, 'running the next');
    await repo.delete(WS, deleted); // on another instance: this one only learns it from its lease
    clock.advance(LEASE / 3);
    await eventually(() => r.runningCount() === 0, 'stopped');
    await eventually(async () => !(await files.hasSource(WS, deleted)), 'files removed');
    assert.equal(existsSync(assetWorkDir(files.root, WS, deleted)), false);
  });

  test('an asset deleted through another instance stops its packaging here at the next look (not a lease third later); the next job goes on', async () => {
    const packager = new ManualPackager();
    const deleted = await upload();
    const next = await upload();
    const r = runner(packager, { exclusive: false });
    await r.start();
    await eventually(() => packager.calls.length === 1, 'running');
    assert.equal(packager.calls[0]?.job.assetId, deleted);
    assert.equal(await repo.delete(WS, deleted), true); // through another instance: no cancel() here
    clock.advance(DELETION_CHECK_MS);
    assert.ok(DELETION_CHECK_MS < LEASE / 3);
    await eventually(() => packager.calls[0]?.job.signal.aborted === true, 'its packaging stopped');
    await eventually(async () => !(await files.hasSource(WS, deleted)) && !existsSync(files.assetDir(WS, deleted)), 'its files removed');
    assert.equal(existsSync(assetWorkDir(files.root, WS, deleted)), false);
    await eventually(() => packager.calls.length === 2, 'the slot taken by the next job');
    assert.equal(packager.calls[1]?.job.assetId, next);
  });
});
