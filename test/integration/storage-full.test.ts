import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { testEngines, type TestStorage } from '../helpers/engines.js';
import { testRedis } from '../helpers/redis.js';
import { createTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../helpers/test-app.js';

/**
 * A full disk, made by the engines themselves rather than by filling one: SQLite refuses new
 * pages past `max_page_count` (SQLITE_FULL), PostgreSQL raises its own disk_full (53100) from
 * a trigger, and Linux's /dev/full answers every write with ENOSPC.
 */
interface DiskFull {
  fill(): Promise<void>;
  free(): Promise<void>;
  /** What readiness names as the reason. */
  reason: RegExp;
}

const sqliteFull = (s: TestStorage): DiskFull => ({
  async fill() {
    const pages = await sql<{ page_count: number }>`pragma page_count`.execute(s.storage.db);
    await sql.raw(`pragma max_page_count = ${pages.rows[0]?.page_count ?? 1}`).execute(s.storage.db);
  },
  async free() {
    await sql.raw('pragma max_page_count = 1073741823').execute(s.storage.db);
  },
  reason: /SQLITE_FULL/,
});

const postgresFull = (s: TestStorage): DiskFull => ({
  async fill() {
    await sql.raw(`
      create function no_space() returns trigger language plpgsql as $$
      begin raise exception 'could not extend file: No space left on device' using errcode = 'disk_full'; end $$;
      create trigger no_space_workspaces before insert or update on workspaces for each statement execute function no_space();
      do $$ begin
        if to_regclass('deployment_checks') is not null then
          create trigger no_space_checks before insert or update on deployment_checks for each statement execute function no_space();
        end if;
      end $$;
    `).execute(s.storage.db);
  },
  async free() {
    await sql.raw('drop function no_space() cascade').execute(s.storage.db);
  },
  reason: /53100/,
});

const redis = await testRedis();
after(() => redis.cleanup());

for (const engine of await testEngines()) {
  describe(`a full disk on ${engine.engine}`, { skip: engine.skip || (engine.engine === 'postgres' && redis.skip) }, () => {
    let s: TestStorage;
    let t: TestApp;
    let disk: DiskFull;
    const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' };
    const createWorkspace = (name: string) => t.app.inject({ method: 'POST', url: '/api/v4/admin/workspaces', headers: admin, payload: JSON.stringify({ name }) });
    before(async () => {
      s = await engine.open();
      // Cluster mode (PostgreSQL): with ffmpeg present it needs a shared media directory too.
      const cluster: Record<string, string> = engine.engine === 'postgres'
        ? { PLAYLINE_REDIS_URL: redis.url, PLAYLINE_REDIS_PREFIX: redis.prefix(), PLAYLINE_MEDIA_DIR: mkdtempSync(join(tmpdir(), 'playline-media-')) }
        : {};
      t = await createTestApp({ storage: s, env: cluster });
      disk = engine.engine === 'sqlite' ? sqliteFull(s) : postgresFull(s);
    });
    after(() => t.close());

    test('a write that fails for lack of space is 503 storage_full, and /readyz is not ready until a write succeeds again', async () => {
      assert.equal((await t.app.inject({ url: '/readyz' })).statusCode, 200);
      await disk.fill();
      // SQLite fills the pages it already has first: write until the next page is needed.
      let refused = await createWorkspace('w'.repeat(200));
      for (let i = 0; i < 1000 && refused.statusCode === 201; i++) refused = await createWorkspace('w'.repeat(200));
      assert.equal(refused.statusCode, 503, refused.body);
      assert.match(String(refused.headers['content-type']), /^application\/problem\+json/);
      assert.equal(refused.json().code, 'storage_full');
      assert.doesNotMatch(refused.body, /SQLITE|53100|No space/, 'the answer names no engine internals');

      const notReady = await t.app.inject({ url: '/readyz' });
      assert.equal(notReady.statusCode, 503);
      assert.equal(notReady.json().code, 'storage_full');
      assert.match(notReady.json().detail, disk.reason);
      assert.equal((await t.app.inject({ url: '/readyz' })).statusCode, 503, 'still full: still not ready');

      await disk.free();
      const ready = await t.app.inject({ url: '/readyz' });
      assert.equal(ready.statusCode, 200, ready.body);
      assert.equal((await createWorkspace('after')).statusCode, 201);
    });
  });
}

describe('a full disk under the ingest journal (embedded)', { skip: existsSync('/dev/full') ? false : 'no /dev/full on this system' }, () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  test('an event batch the journal cannot write (ENOSPC) is 503 storage_full', async () => {
    // The journal's next segments are links to /dev/full: every write to them fails with ENOSPC.
    const dir = join(t.runtime.config.dataDir, 'vod-stats');
    for (let seq = 1; seq <= 3; seq++) symlinkSync('/dev/full', join(dir, `journal-${String(seq).padStart(16, '0')}.log`));
    const r = await t.client.core.send('POST', '/api/v4/monitoring/events', {
      body: [{ type: 'start', owner: t.workspace.id, asset_id: 'a1', session_id: 's1' }],
    });
    assert.equal(r.status, 503, `expected the journal to write to /dev/full (did its segment names change?): ${r.body}`);
    assert.equal(JSON.parse(r.body).code, 'storage_full');
  });
});
