import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { appendFile, mkdtemp, readFile, readdir, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { crc32 } from 'node:zlib';
import { FileEventJournal, type FileEventJournalOptions } from './file-journal.js';
import { encodeRecord } from './journal-record.js';
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
  owners: seq % 5 === 0 ? null : [`ws-${seq % 3}-é`],
  body: Buffer.from(body),
});

/** Replays a fresh journal over `dir`, collecting what it hands over. */
const replayAll = async (options: Omit<FileEventJournalOptions, 'dir'> = {}) => {
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

const clean = { damaged: [], lostBatches: 0, skippedSnapshots: [] };
const segmentsOf = async () => (await readdir(dir)).filter((n) => n.startsWith('journal-')).sort();
const snapshotsOf = async () => (await readdir(dir)).filter((n) => n.startsWith('snapshot-')).sort();

test('appended batches come back from replay exactly, in order', async () => {
  const { journal } = await replayAll();
  const written = [1, 2, 3, 4, 5].map((n) => batch(n));
  for (const b of written) await journal.append(b);
  await journal.close();
  const { seen, result } = await replayAll();
  assert.deepEqual(seen.batches, written);
  assert.deepEqual(result, { snapshotSeq: 0, lastSeq: 5, batches: 5, truncatedBytes: 0, ...clean });
});

test('concurrent appends share writes and fsyncs (group commit) and all resolve durable', async () => {
  const { journal } = await replayAll();
  await Promise.all(Array.from({ length: 200 }, (_, i) => journal.append(batch(i + 1))));
  assert.equal(journal.counters.appends, 200);
  // Appended in one tick, all 200 wait for the first flush: one group, one write, one fsync.
  assert.equal(journal.counters.fsyncs, 1);
  await journal.close();
  const { seen, journal: again } = await replayAll();
  assert.deepEqual(seen.batches.map((b) => b.seq), Array.from({ length: 200 }, (_, i) => i + 1));
  await again.close();
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

const snapshotFileName = (seq: number, lines: string[]) =>
  `snapshot-${String(seq).padStart(16, '0')}-${crc32(Buffer.from(`${lines.join('\n')}\n`)).toString(16).padStart(8, '0')}.ndjson`;

test('snapshots keep the previous one and the journal since it: replay = newest snapshot + later batches, disk stays bounded', async () => {
  const { journal } = await replayAll({ segmentBytes: 2000 });
  const body = 'z'.repeat(500);
  for (let n = 1; n <= 40; n++) await journal.append(batch(n, body));
  const segments = journal.usage().segments;
  assert.ok(segments >= 10);
  await journal.writeSnapshot(20, ['["state", 20]', '["end"]']);
  assert.equal(journal.usage().segments, segments, 'the first snapshot deletes nothing: no previous snapshot to fall back on yet');
  const before = await journal.diskBytes();
  await journal.writeSnapshot(40, ['["state", 40]', '["end"]']);
  for (let n = 41; n <= 43; n++) await journal.append(batch(n, body));
  const after = await journal.diskBytes();
  assert.ok(after < before * 0.7, `disk ${before} -> ${after}: what the previous snapshot (20) covers is gone`);
  assert.ok(journal.usage().bytesSinceSnapshot < journal.usage().journalBytes, 'the backlog counts only what the newest snapshot does not cover');
  await journal.close();
  assert.deepEqual(await snapshotsOf(), [snapshotFileName(20, ['["state", 20]', '["end"]']), snapshotFileName(40, ['["state", 40]', '["end"]'])]);
  assert.ok((await segmentsOf()).every((name) => Number(/\d+/.exec(name)?.[0]) > 16), 'segments wholly covered by snapshot 20 deleted');
  const { seen, result, journal: again } = await replayAll({ segmentBytes: 2000 });
  assert.deepEqual(seen.snapshot, { seq: 40, lines: ['["state", 40]', '["end"]'] });
  assert.deepEqual(seen.batches.map((b) => b.seq), [41, 42, 43]);
  assert.equal(result.snapshotSeq, 40);
  assert.equal(result.lastSeq, 43);
  await again.close();
});

test('a third snapshot deletes the first; batches appended during a snapshot are kept', async () => {
  const { journal } = await replayAll();
  for (let n = 1; n <= 5; n++) await journal.append(batch(n));
  await journal.writeSnapshot(2, ['["s2"]']);
  await journal.writeSnapshot(3, ['["s3"]']);
  const during = journal.append(batch(6));
  await journal.writeSnapshot(5, (function* () {
    yield '["s5"]';
  })());
  await during;
  await journal.close();
  assert.deepEqual(await snapshotsOf(), [snapshotFileName(3, ['["s3"]']), snapshotFileName(5, ['["s5"]'])]);
  const { seen, journal: again } = await replayAll();
  assert.deepEqual(seen.snapshot?.lines, ['["s5"]']);
  assert.deepEqual(seen.batches.map((b) => b.seq), [6]);
  await again.close();
});

test('a snapshot that does not read back is not used: nothing is deleted, and a start ignores it', async () => {
  let refuse = false;
  const checkSnapshot = async (path: string) => {
    if (refuse) throw new Error(`refused ${path}`);
  };
  const { journal } = await replayAll({ segmentBytes: 600, checkSnapshot });
  for (let n = 1; n <= 10; n++) await journal.append(batch(n, 'q'.repeat(200)));
  await journal.writeSnapshot(4, ['["s4"]']);
  await journal.writeSnapshot(6, ['["s6"]']);
  const files = (await readdir(dir)).sort();
  refuse = true;
  await assert.rejects(journal.writeSnapshot(10, ['["s10"]']), /does not read back, so it is not used \(the journal is kept\): refused/);
  assert.deepEqual((await readdir(dir)).sort(), files, 'no snapshot added, nothing deleted, no temp file left');
  await journal.close();
  const { seen, journal: again } = await replayAll({ checkSnapshot });
  assert.deepEqual([seen.snapshot?.seq, seen.batches.map((b) => b.seq)], [6, [7, 8, 9, 10]]);
  await again.close();
});

test('a newest snapshot damaged on disk is set aside: the previous one plus the journal since it restore everything', async () => {
  const { journal } = await replayAll({ segmentBytes: 600 });
  for (let n = 1; n <= 12; n++) {
    await journal.append(batch(n, 'w'.repeat(150)));
    if (n === 4) await journal.writeSnapshot(4, ['["s4"]', '["end"]']);
    if (n === 9) await journal.writeSnapshot(9, ['["s9", 1]', '["end"]']);
  }
  await journal.close();
  const newest = snapshotFileName(9, ['["s9", 1]', '["end"]']);
  for (const damage of ['truncate', 'edit'] as const) {
    const path = join(dir, newest);
    if (damage === 'truncate') await truncate(path, 5);
    else await writeFile(path, '["s9", 1e999]\n["end"]\n');
    const { seen, result, journal: again } = await replayAll();
    assert.deepEqual(seen.snapshot, { seq: 4, lines: ['["s4"]', '["end"]'] });
    assert.deepEqual(seen.batches.map((b) => b.seq), [5, 6, 7, 8, 9, 10, 11, 12]);
    assert.deepEqual(result.skippedSnapshots, [{ file: newest, reason: 'its checksum no longer matches (damaged on disk)' }]);
    assert.equal(result.lostBatches, 0);
    assert.ok((await readdir(dir)).includes(`quarantine-${newest}`), 'set aside for inspection');
    await again.close();
    // The next start does not look at it again: put it back for the second kind of damage.
    await rm(join(dir, `quarantine-${newest}`));
    await writeFile(path, '["s9", 1]\n["end"]\n');
    const clean = await replayAll();
    assert.equal(clean.seen.snapshot?.seq, 9);
    await clean.journal.close();
  }
});

test('appends after close are refused', async () => {
  const { journal } = await replayAll();
  await journal.close();
  await assert.rejects(journal.append(batch(1)), /closed/);
});

const lockModule = fileURLToPath(new URL('../../../platform/directory-lock.ts', import.meta.url));

/** Another process that takes the journal's lock and holds it until killed. */
const lockHolder = async () => {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '-e', `import(${JSON.stringify(lockModule)}).then(({ DirectoryLock }) => { DirectoryLock.acquire(${JSON.stringify(dir)}); console.log('locked'); setInterval(() => undefined, 1000); })`],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => (chunk.toString().includes('locked') ? resolve() : undefined));
    child.once('exit', (code) => reject(new Error(`lock holder exited ${code}`)));
  });
  return child;
};

test('one process per journal: a live server holding it refuses a second; its death (kill -9) frees it', async () => {
  const holder = await lockHolder();
  try {
    await assert.rejects(
      new FileEventJournal({ dir }).replay({ snapshot: () => undefined, batch: () => undefined }),
      new RegExp(`in use by another running Playline server \\(process ${holder.pid}\\); one server per data directory`),
    );
  } finally {
    holder.kill('SIGKILL');
    await new Promise((resolve) => holder.once('exit', resolve));
  }
  // No time to wait, no pid to check: the operating system released the lock with the process.
  const { journal } = await replayAll();
  assert.equal((await readFile(join(dir, 'LOCK'), 'utf8')).trim(), String(process.pid));
  await assert.rejects(new FileEventJournal({ dir }).replay({ snapshot: () => undefined, batch: () => undefined }), /in use by another running Playline server/);
  await journal.close();
  await assert.rejects(readFile(join(dir, 'LOCK')), /ENOENT/);
});

test('a pid file naming a live process that holds no lock (a recycled pid) does not block a start', async () => {
  // The parent test runner is alive, and is not a Playline server.
  await writeFile(join(dir, 'LOCK'), `${process.ppid}\n`);
  const { journal } = await replayAll();
  await journal.close();
  const dead = spawnSync(process.execPath, ['-e', '0']).pid;
  await writeFile(join(dir, 'LOCK'), `${dead}\n`);
  const again = await replayAll();
  await again.journal.close();
});

/** Flips one bit of `file` at `offset`. */
const flipBit = async (file: string, offset: number) => {
  const bytes = await readFile(file);
  bytes[offset] = (bytes[offset] as number) ^ 0x10;
  await writeFile(file, bytes);
};

test('one flipped bit in the middle of an older segment loses that record alone: every other batch is restored, the damage quarantined', async () => {
  const { journal } = await replayAll({ segmentBytes: 64 * 1024 });
  const written = Array.from({ length: 900 }, (_, i) => batch(i + 1, `{"type":"start","n":${i + 1},"pad":"${'p'.repeat(150 + (i % 40))}"}\n`));
  for (const b of written) await journal.append(b);
  await journal.close();
  const segments = await segmentsOf();
  assert.ok(segments.length >= 3, `several segments (${segments.length})`);
  // Where each record of the first segment lies (records are written back to back).
  const first = segments[0] as string;
  const firstBytes = (await readFile(join(dir, first))).length;
  const ranges: { seq: number; from: number; to: number }[] = [];
  let at = 0;
  for (const b of written) {
    if (at >= firstBytes) break;
    const size = encodeRecord(b).reduce((n, part) => n + part.length, 0);
    ranges.push({ seq: b.seq, from: at, to: at + size });
    at += size;
  }
  const middle = Math.floor(firstBytes / 2);
  const hit = ranges.find((r) => r.from <= middle && middle < r.to);
  assert.ok(hit);
  const original = (await readFile(join(dir, first))).subarray(hit.from, hit.to);
  await flipBit(join(dir, first), middle);

  const { seen, result, journal: again } = await replayAll({ segmentBytes: 64 * 1024 });
  assert.deepEqual(seen.batches, written.filter((b) => b.seq !== hit.seq), 'every other acknowledged batch, exactly');
  assert.equal(result.truncatedBytes, 0, 'an older segment is never cut');
  assert.equal(result.lostBatches, 1);
  const quarantine = `quarantine-${first.replace(/\.log$/, '')}-${hit.from}.bin`;
  assert.deepEqual(result.damaged, [{ file: first, offset: hit.from, bytes: hit.to - hit.from, quarantine }]);
  const kept = await readFile(join(dir, quarantine));
  assert.equal(kept.length, original.length);
  assert.equal(Buffer.compare(kept.subarray(0, middle - hit.from), original.subarray(0, middle - hit.from)), 0, 'the damaged bytes as found');
  await again.close();
  // A second start reads the same, and does not quarantine twice.
  const third = await replayAll({ segmentBytes: 64 * 1024 });
  assert.equal(third.seen.batches.length, written.length - 1);
  assert.equal((await readdir(dir)).filter((n) => n.startsWith('quarantine-')).length, 1);
  await third.journal.close();
});

test('damage at the end of an older segment is quarantined, not cut, and the segments after it are read', async () => {
  const { journal } = await replayAll({ segmentBytes: 1000 });
  const written = Array.from({ length: 30 }, (_, i) => batch(i + 1, 'm'.repeat(120)));
  for (const b of written) await journal.append(b);
  await journal.close();
  const [first, second] = await segmentsOf();
  assert.ok(first && second);
  const path = join(dir, first);
  const size = (await stat(path)).size;
  await flipBit(path, size - 3);
  const { seen, result, journal: again } = await replayAll({ segmentBytes: 1000 });
  assert.equal(seen.batches.length, written.length - 1);
  assert.equal(seen.batches.at(-1)?.seq, 30, 'later segments read');
  assert.equal(result.truncatedBytes, 0);
  assert.equal(result.damaged.length, 1);
  assert.equal((await stat(path)).size, size, 'the older segment is left as it was');
  await again.close();
});

/** A record as earlier builds wrote it (version 1, no marker). */
const encodeV1 = (b: JournalBatch): Buffer => {
  const owner = Buffer.from(b.authOwner);
  const payload = Buffer.alloc(22 + owner.length + b.body.length);
  payload.writeUInt8(1, 0);
  payload.writeUInt8(b.kind === 'json' ? 1 : 0, 1);
  payload.writeUInt8(b.owners === null ? 1 : 0, 2);
  payload.writeDoubleLE(b.seq, 4);
  payload.writeDoubleLE(b.receivedAt, 12);
  payload.writeUInt16LE(owner.length, 20);
  owner.copy(payload, 22);
  b.body.copy(payload, 22 + owner.length);
  const head = Buffer.alloc(8);
  head.writeUInt32LE(payload.length, 0);
  head.writeUInt32LE(crc32(payload), 4);
  return Buffer.concat([head, payload]);
};

test('records of an earlier build (version 1) are still read, and new records follow them', async () => {
  const old = [1, 2, 3].map((n) => batch(n));
  await writeFile(join(dir, 'journal-0000000000000001.log'), Buffer.concat(old.map(encodeV1)));
  const { seen, journal } = await replayAll();
  assert.deepEqual(seen.batches, old);
  const granted: JournalBatch = { ...batch(4), authOwner: 'playback-ws', owners: ['playback-ws', 'customer-ws'] };
  await journal.append(granted);
  await journal.close();
  const again = await replayAll();
  assert.deepEqual(again.seen.batches, [...old, granted], 'version 2 records keep the owners the batch could name');
  await again.journal.close();
});
