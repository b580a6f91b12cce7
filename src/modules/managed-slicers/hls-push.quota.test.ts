import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createTestApp, type TestApp } from '../../../test/helpers/test-app.js';
import { eventually } from '../../../test/helpers/eventually.js';
import { mediaToolsSkip } from '../../../test/helpers/media.js';
import { liveInputDir } from '../../platform/media/media-layout.js';
import { mediaRootOf } from '../../platform/media/media-root.js';

const skip = await mediaToolsSkip();
const MiB = 1024 * 1024;

interface Problem {
  code: string;
  quota: string;
  limit: number;
  used: number;
  detail: string;
}

/** An app with one running hls slicer: its push path (without the file name) and input folder. */
async function withHlsSlicer(env: Record<string, string>): Promise<{ t: TestApp; base: string; dir: string; close(): Promise<void> }> {
  const t = await createTestApp({ env: { PLAYLINE_SLICER_PROVISIONER: 'ffmpeg', PLAYLINE_REGIONS: 'eu-central-1', ...env } });
  const slicer = await t.client.managedSlicers.create({ name: 'Pushed', region: 'eu-central-1', ingest_protocol: 'hls', output_profile: 'passthrough' });
  await eventually(async () => (await t.client.managedSlicers.getTask(slicer.task.id)).state === 'COMPLETED', 'the slicer runs');
  const ingestUrl = (await t.client.managedSlicers.get(slicer.id)).ingest_url ?? '';
  const base = new URL(ingestUrl).pathname.replace(/\/index\.m3u8$/, '');
  return { t, base, dir: liveInputDir(mediaRootOf(t.runtime.config), t.workspace.id, slicer.id), close: () => t.close() };
}

const put = (t: TestApp, path: string, bytes: number) => t.app.inject({ method: 'PUT', url: path, payload: Buffer.alloc(bytes, 0x47), headers: { 'content-type': 'video/mp2t' } });
const files = (dir: string) => (existsSync(dir) ? readdirSync(dir).sort() : []);
const folderBytes = (dir: string) => files(dir).reduce((sum, name) => sum + statSync(join(dir, name)).size, 0);

describe('hls push within the slicer folder caps and the workspace storage quota (review N10)', { skip }, () => {
  describe('folder caps', () => {
    let s: Awaited<ReturnType<typeof withHlsSlicer>>;
    before(async () => {
      s = await withHlsSlicer({ PLAYLINE_HLS_PUSH_MAX_FILES: '4', PLAYLINE_HLS_PUSH_MAX_FOLDER_BYTES: String(MiB) });
    });
    after(() => s.close());

    test('a push of one file more than PLAYLINE_HLS_PUSH_MAX_FILES is 409 quota_exceeded; replacing a file or pushing after a DELETE is not', async () => {
      for (let i = 0; i < 4; i++) assert.equal((await put(s.t, `${s.base}/seg${i}.ts`, 1000)).statusCode, 201);
      const fifth = await put(s.t, `${s.base}/seg4.ts`, 1000);
      assert.equal(fifth.statusCode, 409, fifth.body);
      const problem = JSON.parse(fifth.body) as Problem;
      assert.deepEqual([problem.code, problem.quota, problem.limit, problem.used], ['quota_exceeded', 'live_input_files', 4, 4]);
      assert.match(problem.detail, /PLAYLINE_HLS_PUSH_MAX_FILES/);
      assert.deepEqual(files(s.dir), ['seg0.ts', 'seg1.ts', 'seg2.ts', 'seg3.ts'], 'nothing of the refused push stays (no temporary file either)');

      assert.equal((await put(s.t, `${s.base}/seg3.ts`, 2000)).statusCode, 201, 'a file pushed again replaces itself');
      assert.equal((await s.t.app.inject({ method: 'DELETE', url: `${s.base}/seg0.ts` })).statusCode, 204);
      assert.equal((await put(s.t, `${s.base}/seg4.ts`, 1000)).statusCode, 201);
    });

    test('a re-push (the same name pushed again, even twice at once) counts as one file, not two (issue 35, low)', async () => {
      for (const name of files(s.dir)) await s.t.app.inject({ method: 'DELETE', url: `${s.base}/${name}` });
      for (let i = 0; i < 3; i++) assert.equal((await put(s.t, `${s.base}/seg${i}.ts`, 1000)).statusCode, 201);
      // Two pushes of the fourth file under way together: the folder ends with 4 files, within its cap.
      const both = await Promise.all([put(s.t, `${s.base}/seg3.ts`, 1000), put(s.t, `${s.base}/seg3.ts`, 1000)]);
      assert.deepEqual(both.map((a) => a.statusCode), [201, 201], both.map((a) => a.body).join(' '));
      assert.deepEqual(files(s.dir), ['seg0.ts', 'seg1.ts', 'seg2.ts', 'seg3.ts']);
      // The folder's bytes: 700 KiB pushed again over itself within a 1 MiB cap.
      for (const name of files(s.dir)) await s.t.app.inject({ method: 'DELETE', url: `${s.base}/${name}` });
      assert.equal((await put(s.t, `${s.base}/big.ts`, 700 * 1024)).statusCode, 201);
      const again = await put(s.t, `${s.base}/big.ts`, 700 * 1024);
      assert.equal(again.statusCode, 201, again.body);
      for (const name of files(s.dir)) await s.t.app.inject({ method: 'DELETE', url: `${s.base}/${name}` });
    });

    test('a push that would pass PLAYLINE_HLS_PUSH_MAX_FOLDER_BYTES is 507 storage_quota_exceeded and leaves nothing', async () => {
      for (const name of files(s.dir)) await s.t.app.inject({ method: 'DELETE', url: `${s.base}/${name}` });
      assert.equal((await put(s.t, `${s.base}/big0.ts`, 700 * 1024)).statusCode, 201);
      const over = await put(s.t, `${s.base}/big1.ts`, 400 * 1024);
      assert.equal(over.statusCode, 507, over.body);
      const problem = JSON.parse(over.body) as Problem;
      assert.deepEqual([problem.code, problem.quota, problem.limit, problem.used], ['storage_quota_exceeded', 'live_input_bytes', MiB, 700 * 1024]);
      assert.match(problem.detail, /PLAYLINE_HLS_PUSH_MAX_FOLDER_BYTES/);
      assert.deepEqual(files(s.dir), ['big0.ts']);
      assert.equal(folderBytes(s.dir), 700 * 1024);
    });
  });

  describe('workspace storage quota', () => {
    let s: Awaited<ReturnType<typeof withHlsSlicer>>;
    before(async () => {
      s = await withHlsSlicer({ PLAYLINE_QUOTA_STORAGE_BYTES: String(MiB) });
    });
    after(() => s.close());

    test('pushes count in the workspace\'s storage quota: one that would pass it is 507 storage_quota_exceeded; the usage shows the live bytes', async () => {
      assert.equal((await put(s.t, `${s.base}/seg0.ts`, 600 * 1024)).statusCode, 201);
      const usage = JSON.parse((await s.t.client.core.send('GET', '/api/v4/workspace/usage')).body) as { quotas: { storage_bytes: { used: number } }; storage: { by_source: Record<string, number> } };
      assert.equal(usage.storage.by_source.live, 600 * 1024, 'the pushed segment counts (the slicer has no live window yet)');
      assert.equal(usage.quotas.storage_bytes.used, 600 * 1024);

      const over = await put(s.t, `${s.base}/seg1.ts`, 500 * 1024);
      assert.equal(over.statusCode, 507, over.body);
      const problem = JSON.parse(over.body) as Problem;
      assert.deepEqual([problem.code, problem.quota, problem.limit, problem.used], ['storage_quota_exceeded', 'storage_bytes', MiB, 600 * 1024]);
      assert.deepEqual(files(s.dir), ['seg0.ts']);
      // Room again once the encoder deletes what the window no longer names.
      assert.equal((await s.t.app.inject({ method: 'DELETE', url: `${s.base}/seg0.ts` })).statusCode, 204);
      assert.equal((await put(s.t, `${s.base}/seg1.ts`, 500 * 1024)).statusCode, 201);
    });

    test('a re-push counts once in the workspace\'s storage quota: 600 KiB pushed over itself within 1 MiB (issue 35, low)', async () => {
      for (const name of files(s.dir)) await s.t.app.inject({ method: 'DELETE', url: `${s.base}/${name}` });
      assert.equal((await put(s.t, `${s.base}/seg0.ts`, 600 * 1024)).statusCode, 201);
      const again = await put(s.t, `${s.base}/seg0.ts`, 600 * 1024);
      assert.equal(again.statusCode, 201, again.body);
      assert.deepEqual(files(s.dir), ['seg0.ts']);
    });
  });
});
