import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { sameAsWritten, writeLines } from './snapshot-files.js';

test('a snapshot read back chunk by chunk: the same bytes match, one changed byte, a cut or a longer file do not', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'playline-snapshot-files-'));
  try {
    const path = join(dir, 'snap.ndjson');
    // Over 2 MiB, so the read-back crosses its 1 MiB chunks.
    const lines = Array.from({ length: 40_000 }, (_, i) => JSON.stringify(['a', `asset-${i}`, i, 'x'.repeat(40)]));
    const written = await writeLines(path, lines);
    assert.ok(written.bytes > 2 << 20);
    assert.equal(await sameAsWritten(path, written), true);

    const data = Buffer.from(`${lines.join('\n')}\n`);
    assert.equal(written.crc, crc32(data));
    const changed = Buffer.from(data);
    changed[1_500_000] = (changed[1_500_000] as number) ^ 1;
    await writeFile(path, changed);
    assert.equal(await sameAsWritten(path, written), false, 'one flipped bit');
    await writeFile(path, data.subarray(0, data.length - 1));
    assert.equal(await sameAsWritten(path, written), false, 'one byte short');
    await writeFile(path, Buffer.concat([data, Buffer.from('\n')]));
    assert.equal(await sameAsWritten(path, written), false, 'one byte more');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
