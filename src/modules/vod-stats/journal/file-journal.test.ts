import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { appendFile, mkdtemp, readFile, readdir, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileEventJournal } from './file-journal.js';
import type { JournalBatch, ReplaySink } from './journal.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'playline-journal-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const batch = (seq: number, body = `{"n":${seq}}\n`): JournalBatch => ({
  seq,
  receivedAt: 1_795_000_000_000 + seq,
  kind: seq % 2 === 0 ? 'json' : 'ndjson',
  authOwner: `ws-${seq % 3}-é`,
  anyOwner: seq % 5 === 0,
  body: Buffer.from(body),
});

/** Replays a fresh journal over `dir`, collecting what it hands over. */
const replayAll = async (options: { segmentBytes?: number } = {}) => {
  const journal = new FileEventJournal({ dir, ...options });
  const seen: { snapshot?: { seq: number; lines: string[] }; batches: JournalBatch[] } = { batches: [] };
  const sink: ReplaySink = {
    snapshot: (seq, lines) => {
      seen.snapshot = { seq, lines: [...lines].filter((l) => l !== '') };
    },
    batch: (b) => {
      seen.batches.push({ ...b, body: Buffer.from(b.body) });
    },
  };
  const result = await journal.replay(sink);
  return { journal, seen, result };
};

test('appended batches come back from replay exactly, in order', async () => {
  const { journal } = await replayAll();
  const written = [1, 2, 3, 4, 5].map((n) => batch(n));
  for (const b of written) await journal.append(b);
  await journal.close();
  const { seen, result } = await replayAll();
  assert.deepEqual(seen.batches, written);
  assert.deepEqual(result, { snapshotSeq: 0, lastSeq: 5, batches: 5, truncatedBytes: 0 });
});

test('concurrent appends share writes and fsyncs (group commit) and all resolve durable', async () => {
  const { journal } = await replayAll();
  await Promise.all(Array.from({ length: 200 }, (_, i) => journal.append(batch(i + 1))));
  assert.equal(journal.counters.appends, 200);
  // Appended in one tick, all 200 wait for the first flush: one group, one write, one fsync.
  assert.equal(journal.counters.fsyncs, 1);
  const { seen } = await replayAll();
  assert.deepEqual(seen.batches.map((b) => b.seq), Array.from({ length: 200 }, (_, i) => i + 1));
  await journal.close();
});

test('a torn last record (crash mid-write) is cut off and every complete record survives', async () => {
  const { journal } = await replayAll();
  for (const n of [1, 2, 3]) await journal.append(batch(n, 'x'.repeat(100)));
  await journal.close();
  const [segment] = (await readdir(dir)).filter((n) => n.startsWith('journal-'));
  assert.ok(segment);
  const path = join(dir, segment);
  const full = (await stat(path)).size;
  await truncate(path, full - 40); // the third record lost its tail
  const first = await replayAll();
  assert.deepEqual(first.seen.batches.map((b) => b.seq), [1, 2]);
  assert.ok(first.result.truncatedBytes > 0);
  // The journal keeps working after the repair, and the repair is durable.
  await first.journal.append(batch(3, 'y'));
  await first.journal.close();
  const second = await replayAll();
  assert.deepEqual(second.seen.batches.map((b) => [b.seq, b.body.toString()]), [
    [1, 'x'.repeat(100)],
    [2, 'x'.repeat(100)],
    [3, 'y'],
  ]);
  assert.equal(second.result.truncatedBytes, 0);
});

test('garbage and corrupted bytes at the end are detected by length and CRC', async () => {
  const { journal } = await replayAll();
  await journal.append(batch(1));
  await journal.close();
  const [segment] = (await readdir(dir)).filter((n) => n.startsWith('journal-'));
  assert.ok(segment);
  // A plausible header whose CRC does not match its payload.
  const bogus = Buffer.alloc(40);
  bogus.writeUInt32LE(32, 0);
  bogus.writeUInt32LE(12345, 4);
  await appendFile(join(dir, segment), bogus);
  const { seen, result } = await replayAll();
  assert.deepEqual(seen.batches.map((b) => b.seq), [1]);
  assert.equal(result.truncatedBytes, 40);
});

test('a snapshot replaces the journal it covers: replay = snapshot + later batches, disk stays bounded', async () => {
  const { journal } = await replayAll({ segmentBytes: 2000 });
  const body = 'z'.repeat(500);
  for (let n = 1; n <= 40; n++) await journal.append(batch(n, body));
  assert.ok(journal.usage().segments > 5);
  const before = await journal.diskBytes();
  await journal.writeSnapshot(40, ['["state", 40]', '["end"]']);
  for (let n = 41; n <= 43; n++) await journal.append(batch(n, body));
  const after = await journal.diskBytes();
  assert.ok(after < before / 4, `disk ${before} -> ${after}`);
  await journal.close();
  const files = await readdir(dir);
  assert.deepEqual(files.filter((f) => f.startsWith('snapshot-')), ['snapshot-0000000000000040.ndjson']);
  const { seen, result } = await replayAll({ segmentBytes: 2000 });
  assert.deepEqual(seen.snapshot, { seq: 40, lines: ['["state", 40]', '["end"]'] });
  assert.deepEqual(seen.batches.map((b) => b.seq), [41, 42, 43]);
  assert.equal(result.snapshotSeq, 40);
  assert.equal(result.lastSeq, 43);
});

test('a second snapshot deletes the first; batches appended during a snapshot are kept', async () => {
  const { journal } = await replayAll();
  for (let n = 1; n <= 5; n++) await journal.append(batch(n));
  await journal.writeSnapshot(3, ['["s3"]']);
  const during = journal.append(batch(6));
  await journal.writeSnapshot(5, (function* () {
    yield '["s5"]';
  })());
  await during;
  await journal.close();
  const files = (await readdir(dir)).filter((f) => f.startsWith('snapshot-'));
  assert.deepEqual(files, ['snapshot-0000000000000005.ndjson']);
  const { seen } = await replayAll();
  assert.deepEqual(seen.snapshot?.lines, ['["s5"]']);
  assert.deepEqual(seen.batches.map((b) => b.seq), [6]);
});

test('appends after close are refused', async () => {
  const { journal } = await replayAll();
  await journal.close();
  await assert.rejects(journal.append(batch(1)), /closed/);
});

test('one process per journal: a live owner blocks, a lock left by a dead process is taken over', async () => {
  await writeFile(join(dir, 'LOCK'), `${process.ppid}\n`);
  await assert.rejects(new FileEventJournal({ dir }).replay({ snapshot: () => undefined, batch: () => undefined }), /in use by process/);
  const dead = spawnSync(process.execPath, ['-e', '0']).pid;
  await writeFile(join(dir, 'LOCK'), `${dead}\n`);
  const { journal } = await replayAll();
  assert.equal((await readFile(join(dir, 'LOCK'), 'utf8')).trim(), String(process.pid));
  await journal.close();
  await assert.rejects(readFile(join(dir, 'LOCK')), /ENOENT/);
});
