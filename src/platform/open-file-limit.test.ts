import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FALLBACK_OPEN_FILE_LIMIT, connectionCapOf, parseOpenFileLimit, readOpenFileLimit } from './open-file-limit.js';

const procLimits = (soft: string, hard: string) =>
  [
    'Limit                     Soft Limit           Hard Limit           Units     ',
    'Max cpu time              unlimited            unlimited            seconds   ',
    'Max processes             96364                96364                processes ',
    `Max open files            ${soft.padEnd(21)}${hard.padEnd(21)}files     `,
    'Max locked memory         8388608              8388608              bytes     ',
    '',
  ].join('\n');

test('the soft "Max open files" of /proc/self/limits is the open-file limit', () => {
  assert.equal(parseOpenFileLimit(procLimits('1024', '524288')), 1024);
  assert.equal(parseOpenFileLimit(procLimits('65536', '65536')), 65536);
  // Linux never allows more than fs.nr_open (1,048,576 unless raised): "unlimited" counts as that.
  assert.equal(parseOpenFileLimit(procLimits('unlimited', 'unlimited')), 1_048_576);
  assert.equal(parseOpenFileLimit('Limit Soft Limit Hard Limit Units\nMax processes 10 10 processes\n'), undefined);
  assert.equal(parseOpenFileLimit(''), undefined);
});

test('reading the limit: the file when it is there, a safe default when it is not', () => {
  const dir = mkdtempSync(join(tmpdir(), 'playline-limits-'));
  try {
    const file = join(dir, 'limits');
    writeFileSync(file, procLimits('1024', '4096'));
    assert.deepEqual(readOpenFileLimit(file), { limit: 1024, source: file });
    const missing = readOpenFileLimit(join(dir, 'no-such-file'));
    assert.deepEqual(missing, { limit: FALLBACK_OPEN_FILE_LIMIT, source: 'default' });
    writeFileSync(file, 'not a limits file');
    assert.deepEqual(readOpenFileLimit(file), { limit: FALLBACK_OPEN_FILE_LIMIT, source: 'default' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the instance connection cap: two descriptors a connection below the limit less the reserve; a setting above is clamped', () => {
  assert.deepEqual(connectionCapOf({ limit: 1024, reserve: 512 }), { cap: 256, ceiling: 256, clamped: false });
  assert.deepEqual(connectionCapOf({ limit: 65536, reserve: 512 }), { cap: 32512, ceiling: 32512, clamped: false });
  assert.deepEqual(connectionCapOf({ limit: 1024, reserve: 512, setting: 100 }), { cap: 100, ceiling: 256, clamped: false });
  assert.deepEqual(connectionCapOf({ limit: 1024, reserve: 512, setting: 5000 }), { cap: 256, ceiling: 256, clamped: true });
  // A reserve as large as the limit still leaves one connection: a server that accepts nothing is no server.
  assert.deepEqual(connectionCapOf({ limit: 256, reserve: 512 }), { cap: 1, ceiling: 1, clamped: false });
});
