import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { playline } from '../../test/helpers/cli.js';

const ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

/** issue 36: `playline cluster status` needed PLAYLINE_SECRET_KEY and nothing said so. */
describe('playline cluster status without PLAYLINE_SECRET_KEY', () => {
  const database = `playline_status_${randomBytes(6).toString('hex')}`;
  let dataDir: string;
  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'playline-cluster-status-'));
    const admin = new pg.Client({ connectionString: ADMIN_URL });
    await admin.connect();
    await admin.query(`create database "${database}"`);
    await admin.end();
  });
  after(async () => {
    const admin = new pg.Client({ connectionString: ADMIN_URL });
    await admin.connect();
    await admin.query(`drop database if exists "${database}" with (force)`);
    await admin.end();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('says which key it needs and where npm run cluster keeps it, exit 1; makes no stray key file', async () => {
    const out = await playline(['cluster', 'status', '--data-dir', dataDir], {
      PLAYLINE_DATABASE_URL: `postgres://postgres@127.0.0.1:5432/${database}`,
      PLAYLINE_REDIS_URL: 'redis://127.0.0.1:6379',
      PLAYLINE_REDIS_PREFIX: `${database}:`,
      PLAYLINE_SECRET_KEY: undefined,
    });
    assert.equal(out.status, 1, out.stdout + out.stderr);
    assert.match(out.stderr, /^playline: playline cluster reads the deployment's database: set PLAYLINE_SECRET_KEY \(or --secret-key\) to the instances' shared key.+data\/cluster\/secret\.key/m);
    assert.ok(!existsSync(join(dataDir, 'secret.key')), `no key file made: ${readdirSync(dataDir).join(', ')}`);
  });

  test('--help names PLAYLINE_SECRET_KEY', async () => {
    const help = await playline(['cluster', 'status', '--help']);
    assert.match(help.stdout, /Needs the deployment's PLAYLINE_DATABASE_URL, PLAYLINE_REDIS_URL and PLAYLINE_SECRET_KEY/);
  });
});
