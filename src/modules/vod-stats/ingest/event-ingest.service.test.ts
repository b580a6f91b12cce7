import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../../../platform/clock.js';
import type { PlaybackErrorReport } from '../../../platform/error-report-sink.js';
import { AppError } from '../../../platform/errors.js';
import { EventIngestService } from './event-ingest.service.js';
import { checkSnapshotFile } from './snapshot-check.js';
import { FileEventJournal } from '../journal/file-journal.js';
import type { EventJournal } from '../journal/journal.js';
import { MemoryStatsStore } from '../store/memory-stats-store.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'playline-ingest-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const T0 = Date.UTC(2026, 10, 21, 10, 0, 0);

const open = async (clock: FakeClock, options: { journal?: EventJournal; snapshotMinBytes?: number; snapshotSliceMs?: number; stopwatch?: () => number; maxAssets?: number; store?: MemoryStatsStore } = {}) => {
  const store = options.store ?? new MemoryStatsStore({ clock, ...(options.maxAssets ? { maxAssetsPerWorkspace: options.maxAssets } : {}) });
  const reports: PlaybackErrorReport[] = [];
  const service = new EventIngestService({
    store,
    journal: options.journal ?? new FileEventJournal({ dir, checkSnapshot: checkSnapshotFile }),
    clock,
    errorReports: { submit: (r) => reports.push(r) },
    snapshotMinBytes: options.snapshotMinBytes ?? 1 << 30,
    ...(options.snapshotSliceMs !== undefined ? { snapshotSliceMs: options.snapshotSliceMs } : {}),
    ...(options.stopwatch ? { stopwatch: options.stopwatch } : {}),
  });
  const restored = await service.restore();
  return { store, service, reports, restored };
};

const ndjson = (...events: Record<string, unknown>[]) =>
  Buffer.from(events.map((e) => JSON.stringify({ owner: 'ws1', asset_id: 'a1', session_id: 's1', ...e })).join('\n'));
const auth = { owner: 'ws1', kind: 'api' as const };

/** Every statistic of the given assets, as a client would compare them. */
const everything = async (store: MemoryStatsStore, assets: string[]) => ({
  assets: await Promise.all(assets.map((a) => store.get('ws1', a))),
  top: await store.top('ws1', 100),
  summary: await store.summary('ws1'),
});

test('an accepted batch is counted, and a restart restores exactly the same statistics', async () => {
  const clock = new FakeClock(T0);
  const first = await open(clock);
  const result = await first.service.ingest(
    ndjson({ type: 'start' }, { type: 'manifest', latency_ms: 12 }, { type: 'bogus' }, { type: 'start', asset_id: 'a2', session_id: 's2' }),
    'ndjson',
    auth,
  );
  assert.equal(result.accepted, 3);
  assert.deepEqual(result.rejected.map((r) => r.index), [2]);
  clock.advance(61_000);
  await first.service.ingest(Buffer.from(JSON.stringify([{ type: 'start', owner: 'ws1', asset_id: 'a1', session_id: 's3' }])), 'json', auth);
  const before = await everything(first.store, ['a1', 'a2']);
  assert.equal(before.assets[0]?.stats.new, 2);
  await first.service.close();

  const second = await open(clock);
  assert.equal(second.restored.batches, 2);
  assert.deepEqual(await everything(second.store, ['a1', 'a2']), before);
  await second.service.close();
});

test('a snapshot plus the journal after it restores the same statistics, and later batches continue the sequence', async () => {
  const clock = new FakeClock(T0);
  const first = await open(clock);
  for (let i = 0; i < 20; i++) {
    clock.advance(7_000);
    await first.service.ingest(ndjson({ type: 'start', asset_id: `a${i % 4}`, session_id: `s${i}` }, { type: 'request', asset_id: `a${i % 4}` }), 'ndjson', auth);
    if (i === 9) await first.service.snapshot();
  }
  const before = await everything(first.store, ['a0', 'a1', 'a2', 'a3']);
  await first.service.close();
  assert.equal((await readdir(dir)).filter((f) => f.startsWith('snapshot-')).length, 1);

  const second = await open(clock);
  assert.equal(second.restored.snapshotSeq, 10);
  assert.equal(second.restored.batches, 10);
  assert.deepEqual(await everything(second.store, ['a0', 'a1', 'a2', 'a3']), before);
  await second.service.ingest(ndjson({ type: 'start', session_id: 'late' }), 'ndjson', auth);
  await second.service.close();
  const third = await open(clock);
  assert.equal(third.restored.lastSeq, 21);
  await third.service.close();
});

test('snapshots are taken by themselves once the journal has grown enough', async () => {
  const clock = new FakeClock(T0);
  const { service } = await open(clock, { snapshotMinBytes: 2_000 });
  for (let i = 0; i < 30; i++) await service.ingest(ndjson({ type: 'start', session_id: `s${i}` }), 'ndjson', auth);
  await service.drain();
  assert.ok((await readdir(dir)).some((f) => f.startsWith('snapshot-')));
  await service.close();
});

test('accepted error events go to the error report sink with the payload fields', async () => {
  const clock = new FakeClock(T0);
  const { service, reports } = await open(clock);
  await service.ingest(
    ndjson(
      { type: 'error', error_code: 104, http_status: 403, url: 'https://x/play/a1.m3u8', ip: '10.0.0.1', ua: 'UA', msg: 'expired', ts: T0 - 1500 },
      { type: 'error', error_code: 110 },
      { type: 'start' },
    ),
    'ndjson',
    auth,
  );
  assert.deepEqual(reports, [
    { owner: 'ws1', url: 'https://x/play/a1.m3u8', ip: '10.0.0.1', code: 403, ua: 'UA', msg: 'expired', timestamp: Math.floor((T0 - 1500) / 1000), errorCode: 104 },
    { owner: 'ws1', url: '', ip: '', code: 400, ua: '', msg: 'Invalid token signature', timestamp: T0 / 1000, errorCode: 110 },
  ]);
  await service.close();
});

test('a batch the journal cannot store is refused (503) and not counted', async () => {
  const clock = new FakeClock(T0);
  const failing: EventJournal = {
    replay: () => Promise.resolve({ snapshotSeq: 0, lastSeq: 0, batches: 0, truncatedBytes: 0, damaged: [], lostBatches: 0, skippedSnapshots: [] }),
    append: () => Promise.reject(new Error('disk full')),
    writeSnapshot: () => Promise.resolve(),
    usage: () => ({ segments: 0, journalBytes: 0, snapshotBytes: 0, bytesSinceSnapshot: 0 }),
    close: () => Promise.resolve(),
  };
  const { service, store } = await open(clock, { journal: failing });
  await assert.rejects(service.ingest(ndjson({ type: 'start' }), 'ndjson', auth), (e: unknown) => e instanceof AppError && e.code === 'service_unavailable');
  assert.equal(await store.get('ws1', 'a1'), undefined);
  // A batch with nothing acceptable never touches the journal.
  assert.deepEqual(await service.ingest(ndjson({ type: 'bogus' }), 'ndjson', auth), {
    accepted: 0,
    rejected: [{ index: 0, code: 'invalid_field', detail: 'type must be one of request, manifest, ad, start, error, rebuffer' }],
    rejected_count: 1,
  });
});

test('batches ingested while a snapshot is being copied are neither lost nor counted twice', async () => {
  const clock = new FakeClock(T0);
  // The copy yields to the event loop after every line: these batches arrive in the middle of it.
  const first = await open(clock, { snapshotSliceMs: 0 });
  const many = Array.from({ length: 3000 }, (_, i) => ({ type: 'start', asset_id: `m${i}`, session_id: `s${i}` }));
  await first.service.ingest(ndjson(...many), 'ndjson', auth);
  const snapshot = first.service.snapshot();
  const during = Array.from({ length: 5 }, (_, i) =>
    first.service.ingest(ndjson({ type: 'start', asset_id: `m${i}`, session_id: `late${i}` }), 'ndjson', auth),
  );
  await Promise.all([snapshot, ...during]);
  const ids = ['m0', 'm1', 'm4', 'm5', 'm2999'];
  const before = await everything(first.store, ids);
  assert.equal(before.assets[0]?.stats.new, 2);
  await first.service.close();
  const second = await open(clock);
  assert.equal(second.restored.snapshotSeq >= 1, true);
  assert.deepEqual(await everything(second.store, ids), before);
  assert.equal((await second.store.size()).assets, 3000);
  await second.service.close();
});

test('a batch larger than a counting slice is counted in slices (the event loop runs), drops mapped to their lines, and replays the same', async () => {
  const clock = new FakeClock(T0);
  const first = await open(clock, { maxAssets: 3 });
  const events = Array.from({ length: 20_000 }, (_, i) => ({ type: i % 2 ? 'start' : 'request', asset_id: `m${i % 3}`, session_id: `s${i}` }));
  events[9000] = { type: 'start', asset_id: 'fourth', session_id: 'x' };
  events[17_000] = { type: 'start', asset_id: 'fifth', session_id: 'y' };
  let turns = 0;
  let ticking = true;
  const tick = () => {
    turns++;
    if (ticking) setImmediate(tick);
  };
  setImmediate(tick);
  const result = await first.service.ingest(ndjson(...events), 'ndjson', auth);
  ticking = false;
  assert.ok(turns >= 3, `the event loop ran ${turns} times during the batch`);
  assert.equal(result.accepted, 19_998);
  assert.deepEqual(result.rejected.map((r) => [r.index, r.code]), [[9000, 'asset_limit_reached'], [17_000, 'asset_limit_reached']]);
  const before = await everything(first.store, ['m0', 'm1', 'm2']);
  assert.equal(first.store.droppedEvents, 2);
  await first.service.close();
  const second = await open(clock, { maxAssets: 3 });
  assert.deepEqual(await everything(second.store, ['m0', 'm1', 'm2']), before);
  await second.service.close();
});

/** Copies the journal directory (a control that is never damaged). */
const copyDir = async (to: string) => {
  await cp(dir, to, { recursive: true });
  await rm(join(to, 'LOCK'), { force: true });
};

test('the snapshot copy yields by time, not by a count of lines: lines that take long each still let the event loop turn between them', async () => {
  const clock = new FakeClock(T0);
  let turns = 0;
  /** Turns of the event loop seen while the copy ran: from its first line to its last. */
  let duringCopy = 0;
  /** The stopwatch the slicing reads: each snapshot line takes 3 ms on it (an asset with very many marks). */
  let elapsedMs = 0;
  class SlowLines extends MemoryStatsStore {
    override *snapshotLines(): Iterable<string> {
      const before = turns;
      for (const line of super.snapshotLines()) {
        elapsedMs += 3;
        yield line;
      }
      duringCopy = turns - before;
    }
  }
  const store = new SlowLines({ clock });
  const first = await open(clock, { store, stopwatch: () => elapsedMs });
  await first.service.ingest(ndjson(...Array.from({ length: 20 }, (_, i) => ({ type: 'start', asset_id: `m${i}`, session_id: `s${i}` }))), 'ndjson', auth);
  let spinning = true;
  const spin = () => {
    turns++;
    if (spinning) setImmediate(spin);
  };
  setImmediate(spin);
  await first.service.snapshot();
  spinning = false;
  // 23 lines (header, owner, 20 assets, end) of 3 ms each, sliced at 5 ms: a turn after every second line.
  assert.ok(duringCopy >= 10, `the event loop turned ${duringCopy} times during the copy`);
  await first.service.close();
});

test('the snapshot reaches the journal a chunk at a time while it is made: the store is never copied whole into memory', async () => {
  const clock = new FakeClock(T0);
  let elapsedMs = 0;
  let made = 0;
  class CountedLines extends MemoryStatsStore {
    override *snapshotLines(): Iterable<string> {
      for (const line of super.snapshotLines()) {
        made++;
        elapsedMs += 3;
        yield line;
      }
    }
  }
  const store = new CountedLines({ clock });
  const file = new FileEventJournal({ dir, checkSnapshot: checkSnapshotFile });
  /** Lines the store had made when each chunk reached the journal. */
  const madeAtChunk: number[] = [];
  const journal: EventJournal = {
    replay: (sink) => file.replay(sink),
    append: (batch) => file.append(batch),
    usage: () => file.usage(),
    close: () => file.close(),
    writeSnapshot: (seq, lines) =>
      file.writeSnapshot(
        seq,
        (async function* () {
          for await (const chunk of lines) {
            madeAtChunk.push(made);
            yield chunk;
          }
        })(),
      ),
  };
  const first = await open(clock, { store, journal, stopwatch: () => elapsedMs });
  await first.service.ingest(ndjson(...Array.from({ length: 20 }, (_, i) => ({ type: 'start', asset_id: `m${i}`, session_id: `s${i}` }))), 'ndjson', auth);
  const before = await everything(first.store, ['m0', 'm19']);
  await first.service.snapshot();
  // 23 lines, a slice (and a chunk) every second one: the first chunk went out after two lines, not after all.
  assert.ok(madeAtChunk.length >= 10, `${madeAtChunk.length} chunks`);
  assert.equal(madeAtChunk[0], 2);
  assert.equal(made, 23);
  await first.service.close();
  const second = await open(clock);
  assert.ok(second.restored.snapshotSeq >= 1);
  assert.equal(second.restored.batches, 0, 'restored from the streamed snapshot alone');
  assert.deepEqual(await everything(second.store, ['m0', 'm19']), before);
  await second.service.close();
});

test('a snapshot the journal refuses, before reading it or part-way through, leaves the store counting', async () => {
  const clock = new FakeClock(T0);
  const file = new FileEventJournal({ dir, checkSnapshot: checkSnapshotFile });
  let refuse: 'before' | 'midway' = 'before';
  const journal: EventJournal = {
    replay: (sink) => file.replay(sink),
    append: (batch) => file.append(batch),
    usage: () => file.usage(),
    close: () => file.close(),
    writeSnapshot: async (_seq, lines) => {
      if (refuse === 'before') throw new Error('disk full');
      for await (const _chunk of lines) throw new Error('disk full part-way');
    },
  };
  const { service, store } = await open(clock, { journal, snapshotSliceMs: 0 });
  await service.ingest(ndjson({ type: 'start' }, { type: 'start', asset_id: 'a2', session_id: 's2' }), 'ndjson', auth);
  await assert.rejects(service.snapshot(), /disk full/);
  await service.ingest(ndjson({ type: 'start', session_id: 's3' }), 'ndjson', auth);
  refuse = 'midway';
  await assert.rejects(service.snapshot(), /disk full part-way/);
  await service.ingest(ndjson({ type: 'start', session_id: 's4' }), 'ndjson', auth);
  assert.equal((await store.get('ws1', 'a1'))?.stats.new, 3);
  await service.close();
});

test('a damaged newest snapshot (truncated, or a 1e999 in it): the start restores exactly from the previous snapshot and the journal', async () => {
  const clock = new FakeClock(T0);
  const first = await open(clock);
  const assets = ['a0', 'a1', 'a2', 'a3', 'a4'];
  for (let i = 0; i < 30; i++) {
    clock.advance(4_000);
    await first.service.ingest(
      ndjson({ type: 'start', asset_id: `a${i % 5}`, session_id: `s${i}` }, { type: 'manifest', asset_id: `a${i % 5}`, session_id: `s${i}`, latency_ms: 10 + i }),
      'ndjson',
      auth,
    );
    if (i === 9 || i === 19) await first.service.snapshot();
  }
  const before = await everything(first.store, assets);
  await first.service.close();
  const snapshots = (await readdir(dir)).filter((f) => f.startsWith('snapshot-')).sort();
  assert.equal(snapshots.length, 2, 'the previous snapshot is kept');
  const newest = join(dir, snapshots[1] as string);
  const control = `${dir}-control`;
  await copyDir(control);
  try {
    for (const damage of ['truncate', '1e999'] as const) {
      const text = await readFile(newest, 'utf8');
      if (damage === 'truncate') await writeFile(newest, text.slice(0, Math.floor(text.length / 2)));
      else await writeFile(newest, text.replace(/^(\["playline-vod-stats",\d+,)\d+/, '$11e999'));
      assert.notEqual(await readFile(newest, 'utf8'), text);
      const second = await open(clock);
      assert.deepEqual(second.restored.skippedSnapshots.map((s) => s.file), [snapshots[1]]);
      assert.equal(second.restored.snapshotSeq, 10, 'restored from the previous snapshot');
      assert.equal(second.restored.batches, 20, 'and the journal since it');
      assert.deepEqual(await everything(second.store, assets), before);
      await second.service.close();
      // Back to the undamaged files for the next kind of damage.
      await rm(dir, { recursive: true });
      await cp(control, dir, { recursive: true });
    }
    const third = await open(clock);
    assert.equal(third.restored.snapshotSeq, 20);
    assert.deepEqual(await everything(third.store, assets), before, 'the undamaged control restores the same from the newest');
    await third.service.close();
  } finally {
    await rm(control, { recursive: true, force: true });
  }
});

test('a snapshot of a state that does not read back is not used, and the journal stays', async () => {
  const clock = new FakeClock(T0);
  const first = await open(clock);
  await first.service.ingest(ndjson({ type: 'start' }), 'ndjson', auth);
  // A store whose snapshot holds a number the restore refuses (what Infinity once produced).
  const lines = first.store.snapshotLines.bind(first.store);
  first.store.snapshotLines = function* () {
    for (const line of lines()) yield line.startsWith('["playline-vod-stats"') ? line.replace(/\d+\]$/, '1e999]') : line;
  };
  await assert.rejects(first.service.snapshot(), /does not read back/);
  await first.service.close();
  assert.deepEqual((await readdir(dir)).filter((f) => f.startsWith('snapshot-')), []);
  const second = await open(clock);
  assert.equal(second.restored.batches, 1);
  assert.equal((await second.store.get('ws1', 'a1'))?.stats.new, 1);
  await second.service.close();
});

test('an ingest key submits for the workspaces that granted it; a restart re-derives exactly what was accepted, whatever the grants are by then', async () => {
  const clock = new FakeClock(T0);
  let allowed = new Set(['server', 'ws1']);
  const owners = { allowedOwners: () => Promise.resolve(allowed), existing: (ids: readonly string[]) => Promise.resolve(new Set(ids.filter((id) => id !== 'ghost'))) };
  const openWith = async () => {
    const store = new MemoryStatsStore({ clock });
    const service = new EventIngestService({ store, journal: new FileEventJournal({ dir }), clock, errorReports: { submit: () => undefined }, owners, snapshotMinBytes: 1 << 30 });
    return { store, service, restored: await service.restore() };
  };
  const first = await openWith();
  const body = ndjson({ type: 'start', owner: 'ws1' }, { type: 'start', owner: 'ws2', session_id: 's2' }, { type: 'start', owner: 'ghost', session_id: 's3' });
  const result = await first.service.ingest(body, 'ndjson', { owner: 'server', kind: 'ingest' });
  assert.deepEqual([result.accepted, result.rejected.map((r) => [r.index, r.code])], [1, [[1, 'owner_not_allowed'], [2, 'unknown_owner']]]);
  await first.service.close();
  // The grants change completely: ws1 revoked, ws2 granted.
  allowed = new Set(['server', 'ws2']);
  const second = await openWith();
  assert.equal((await second.store.get('ws1', 'a1'))?.stats.new, 1, 'accepted then, restored now');
  assert.equal(await second.store.get('ws2', 'a1'), undefined, 'refused then, still not counted');
  await second.service.close();
});
