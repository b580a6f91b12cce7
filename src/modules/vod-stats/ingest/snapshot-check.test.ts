import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../../../platform/clock.js';
import { fileLines } from '../journal/snapshot-files.js';
import { MemoryStatsStore } from '../store/memory-stats-store.js';
import { playbackEvent } from '../test-events.test-support.js';
import { checkSnapshotFile } from './snapshot-check.js';

const T0 = Date.UTC(2026, 10, 26, 10, 0, 0);
const dir = mkdtempSync(join(tmpdir(), 'playline-snapshot-check-'));

test('fileLines gives the lines of decoding the whole file, whatever the chunk size (multi-byte characters across chunks, no final newline)', () => {
  const path = join(dir, 'lines.txt');
  writeFileSync(path, 'first é line\n\n日本語 across chunks\r\n€€€\nlast without newline');
  const whole = readFileSync(path, 'utf8').split('\n');
  for (const chunk of [1, 2, 3, 5, 64, 1 << 20]) assert.deepEqual([...fileLines(path, chunk)], whole, `chunks of ${chunk}`);
  writeFileSync(path, 'a\nb\n');
  assert.deepEqual([...fileLines(path, 2)], ['a', 'b'], 'a final newline ends the last line (the empty rest is not a line)');
});

test('the read-back check reads every line the way a start does but keeps no asset, and refuses what a start refuses', async () => {
  const clock = new FakeClock(T0);
  const store = new MemoryStatsStore({ clock });
  await store.record(Array.from({ length: 40 }, (_, n) => playbackEvent('start', `a${n % 25}`, `s${n}`, T0)), T0);
  const lines = [...store.snapshotLines()];
  const scratch = new MemoryStatsStore({ clock });
  assert.equal(scratch.checkSnapshot(lines), 25, 'every asset read');
  assert.equal((await scratch.size()).assets, 0, 'none kept');
  assert.throws(() => new MemoryStatsStore({ clock }).checkSnapshot(lines.slice(0, -1)), /truncated/);
  const broken = lines.map((l) => (l.startsWith('["a"') ? l.replace(/,\d+,/, ',1e999,') : l));
  assert.throws(() => new MemoryStatsStore({ clock }).checkSnapshot(broken), /finite/);

  const good = join(dir, 'good.ndjson');
  writeFileSync(good, `${lines.join('\n')}\n`);
  await checkSnapshotFile(good);
  const torn = join(dir, 'torn.ndjson');
  writeFileSync(torn, lines.slice(0, -1).join('\n'));
  await assert.rejects(checkSnapshotFile(torn), /truncated/);
});
