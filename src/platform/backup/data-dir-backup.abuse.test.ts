import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { backupDataDir } from './data-dir-backup.js';
import { SQLITE_FILE } from '../db/database.js';

/** Abuse: a backup target inside the data directory nested itself into every later backup (issue 36: 502 files, then 1,011). */
describe('backup refuses a target inside the data directory, however spelled', () => {
  let base: string;
  let dataDir: string;
  before(() => {
    base = mkdtempSync(join(tmpdir(), 'playline-backup-abuse-'));
    dataDir = join(base, 'data');
    mkdirSync(join(dataDir, 'media'), { recursive: true });
    const db = new SQLite(join(dataDir, SQLITE_FILE));
    db.exec('create table t (x integer)');
    db.close();
    writeFileSync(join(dataDir, 'media', 'a.bin'), 'media');
    // A symlink outside the data directory that leads into it.
    symlinkSync(join(dataDir, 'media'), join(base, 'looks-outside'));
  });
  after(() => rmSync(base, { recursive: true, force: true }));

  const backup = (target: string) => backupDataDir({ dataDir, target, secretKeyFromSetting: false, version: 'test' });

  for (const [how, target] of [
    ['a folder in it', () => join(dataDir, 'backups', 'today')],
    ['the data directory itself (empty target check aside)', () => dataDir],
    ['spelled with ..', () => join(base, 'elsewhere', '..', 'data', 'b')],
    ['through a symlink that leads into it', () => join(base, 'looks-outside', 'b')],
    ['a relative data dir spelling', () => join(dataDir, '.', 'media', '..', 'snap')],
  ] as const) {
    test(`refused: ${how}; nothing is written`, async () => {
      const before = readdirSync(dataDir, { recursive: true }).sort();
      await assert.rejects(backup(target()), /is inside the data directory .+: back up into a directory outside it/);
      assert.deepEqual(readdirSync(dataDir, { recursive: true }).sort(), before);
    });
  }

  test('a target outside is backed up once, without itself', async () => {
    const target = join(base, 'outside', 'b1');
    const manifest = await backup(target);
    assert.deepEqual(manifest.files.map((f) => f.path).sort(), ['media/a.bin', SQLITE_FILE]);
    assert.ok(existsSync(join(target, 'backup.json')));
  });
});
