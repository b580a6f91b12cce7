import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { createTestApp, type TestApp } from '../../../test/helpers/test-app.js';
import { makeClip, mediaToolsSkip } from '../../../test/helpers/media.js';
import { assetDir, assetLibraryDirs } from '../../platform/media/media-layout.js';
import type { PlaylineClient } from '../../client/index.js';

// Without ffmpeg the asset routes answer 503 before any quota is looked at.
const skip = await mediaToolsSkip();

const ASSETS = '/api/v4/assets';
const USAGE = '/api/v4/workspace/usage';
const MiB = 1024 * 1024;

interface Usage {
  quotas: Record<string, { used: number; limit: number }>;
  storage: { by_source: Record<string, number>; reserved: number };
}

const usageOf = async (client: PlaylineClient): Promise<Usage> => {
  const response = await client.core.send('GET', USAGE);
  assert.equal(response.status, 200, response.body);
  return JSON.parse(response.body) as Usage;
};

/** Files under a directory, recursively (none when it does not exist). */
const filesUnder = (dir: string): string[] =>
  existsSync(dir) ? readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name)) : [];

const bytesUnder = (dir: string): number => filesUnder(dir).reduce((sum, file) => sum + statSync(file).size, 0);

async function eventually(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await condition()) return;
    await delay(10);
  }
  throw new Error(`never: ${what}`);
}

describe('asset uploads within the workspace quotas (review N10)', { skip }, () => {
  let t: TestApp;
  let scratch: string;
  let clip: string;
  let media: string;
  let uploads: string;
  let base: URL;
  before(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'playline-assets-quota-'));
    clip = await makeClip(scratch, 'clip.mp4', { seconds: 1, width: 160, height: 90 });
    t = await createTestApp({ env: { PLAYLINE_QUOTA_STORAGE_BYTES: String(2 * MiB), PLAYLINE_QUOTA_ASSETS: '3', PLAYLINE_PACKAGING_LADDER: '144p', PLAYLINE_PACKAGING_PRESET: 'ultrafast' } });
    base = new URL(await t.app.listen({ host: '127.0.0.1', port: 0 }));
    media = t.runtime.assets.files.root;
    uploads = assetLibraryDirs(media).uploads;
  });
  after(async () => {
    await t.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  /** Everything the workspace has on disk: sources, packaging work, packaged assets, uploads being received. */
  const onDisk = (owner = t.workspace.id) => [
    ...filesUnder(join(assetLibraryDirs(media).sources, owner)),
    ...filesUnder(join(assetLibraryDirs(media).work, owner)),
    ...filesUnder(join(assetLibraryDirs(media).assets, owner)),
    ...filesUnder(uploads),
  ].sort();

  test('the usage route reports each quota with its limit; a packaged asset counts its packaged output', async () => {
    const before = await usageOf(t.client);
    assert.deepEqual(before.quotas.storage_bytes, { used: 0, limit: 2 * MiB });
    assert.deepEqual(before.quotas.assets, { used: 0, limit: 3 });
    for (const name of ['slicers', 'targets', 'schedules', 'active_pushes']) assert.equal(before.quotas[name]?.used, 0, name);
    assert.equal(before.quotas.slicers?.limit, 16);

    const uploaded = await t.client.assets.upload(clip, { title: 'counted' });
    const ready = await t.client.assets.waitUntilPackaged(uploaded.id, { intervalMs: 20 });
    assert.equal(ready.state, 'ready');
    const packaged = bytesUnder(assetDir(media, t.workspace.id, uploaded.id));
    assert.notEqual(packaged, readFileSync(clip).length, 'the packaged output is not the upload');
    const after = await usageOf(t.client);
    assert.equal(after.quotas.storage_bytes?.used, packaged, 'the storage quota counts the packaged output, measured when packaging ended');
    assert.equal(after.storage.by_source.assets, packaged);
    assert.equal(after.quotas.assets?.used, 1);
    // Another workspace's use is its own.
    assert.equal((await usageOf(t.other.client)).quotas.storage_bytes?.used, 0);
    await t.client.assets.delete(uploaded.id);
    assert.equal((await usageOf(t.client)).quotas.storage_bytes?.used, 0, 'a deleted asset stops counting');
  });

  test('an upload whose declared length passes the storage quota is 507 storage_quota_exceeded before its body is read: nothing on disk, usage unchanged', async () => {
    const kept = await t.client.assets.upload(clip, { title: 'kept' });
    await t.client.assets.waitUntilPackaged(kept.id, { intervalMs: 20 });
    const usage = await usageOf(t.client);
    const disk = onDisk();

    const response = await t.client.core.send('POST', ASSETS, { body: Buffer.alloc(2 * MiB, 1), contentType: 'video/mp4' });
    assert.equal(response.status, 507, response.body);
    const problem = JSON.parse(response.body) as { code: string; quota: string; limit: number; used: number; requested: number; detail: string };
    assert.equal(problem.code, 'storage_quota_exceeded');
    assert.equal(problem.quota, 'storage_bytes');
    assert.equal(problem.limit, 2 * MiB);
    assert.equal(problem.used, usage.quotas.storage_bytes?.used);
    assert.equal(problem.requested, 2 * MiB);
    assert.match(problem.detail, /PLAYLINE_QUOTA_STORAGE_BYTES/);

    assert.deepEqual(onDisk(), disk, 'nothing left on disk');
    assert.deepEqual(await usageOf(t.client), usage, 'the usage is unchanged');
    assert.equal((await t.client.assets.list()).page.total_items, 1);
    // The quota is this workspace's: another one still uploads.
    const theirs = await t.other.client.assets.upload(clip, { title: 'theirs' });
    await t.other.client.assets.waitUntilPackaged(theirs.id, { intervalMs: 20 });
    await t.other.client.assets.delete(theirs.id);
    await t.client.assets.delete(kept.id);
  });

  test('a chunked upload (no Content-Length) that crosses the storage quota is cut with 507: nothing on disk, usage unchanged', async () => {
    const usage = await usageOf(t.client);
    const disk = onDisk();
    const chunks = Array.from({ length: 12 }, (_, i) => Buffer.alloc(256 * 1024, i));
    const response = await t.client.core.send('POST', ASSETS, { body: Readable.from(chunks), contentType: 'video/mp4' });
    assert.equal(response.status, 507, response.body);
    assert.equal((JSON.parse(response.body) as { code: string }).code, 'storage_quota_exceeded');
    await eventually(() => filesUnder(uploads).length === 0, 'the partial upload removed');
    assert.deepEqual(onDisk(), disk, 'nothing left on disk');
    assert.deepEqual(await usageOf(t.client), usage, 'the usage is unchanged (the held bytes are given back)');
    assert.equal((await t.client.assets.list()).page.total_items, 0);
  });

  test('two uploads of one workspace at once cannot both pass under the quota: the first holds its bytes while it arrives', async () => {
    const size = Math.floor(1.5 * MiB);
    const first = request({ host: base.hostname, port: base.port, method: 'POST', path: t.client.core.signedPath(ASSETS), headers: { 'content-type': 'video/mp4', 'content-length': String(size) } });
    const answer = new Promise<{ status: number | undefined; body: string }>((resolve, reject) => {
      first.on('response', (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode, body }));
      });
      first.on('error', reject);
    });
    first.write(Buffer.alloc(256 * 1024, 3));
    await eventually(() => filesUnder(uploads).length === 1, 'the first upload being received');
    const during = await usageOf(t.client);
    assert.equal(during.storage.reserved, size, 'the declared length is held while the body arrives');

    const second = await t.client.core.send('POST', ASSETS, { body: Buffer.alloc(size, 4), contentType: 'video/mp4' });
    assert.equal(second.status, 507, second.body);
    assert.equal((JSON.parse(second.body) as { used: number }).used, size);

    first.end(Buffer.alloc(size - 256 * 1024, 3));
    const { status, body } = await answer;
    assert.equal(status, 201, body);
    const created = JSON.parse(body) as { id: string };
    const after = await usageOf(t.client);
    assert.equal(after.storage.reserved, 0, 'the hold became the asset');
    // Junk fails packaging; until then it counts as its upload.
    const failed = await t.client.assets.waitUntilPackaged(created.id, { intervalMs: 20 });
    assert.equal(failed.state, 'failed');
    assert.equal((await usageOf(t.client)).quotas.storage_bytes?.used, size, 'a failed asset keeps its upload (for a retry), counted until it is deleted');
    await t.client.assets.delete(created.id);
    assert.equal((await usageOf(t.client)).quotas.storage_bytes?.used, 0, 'deleted: nothing left');
  });

  test('an upload cut by the client gives its held bytes back', async () => {
    const req = request({ host: base.hostname, port: base.port, method: 'POST', path: t.client.core.signedPath(ASSETS), headers: { 'content-type': 'video/mp4', 'content-length': String(MiB) } });
    req.on('error', () => undefined);
    req.write(Buffer.alloc(64 * 1024, 5));
    await eventually(() => filesUnder(uploads).length === 1, 'the upload being received');
    assert.equal((await usageOf(t.client)).storage.reserved, MiB);
    req.destroy();
    await eventually(async () => (await usageOf(t.client)).storage.reserved === 0, 'the hold given back');
    await eventually(() => filesUnder(uploads).length === 0, 'the partial upload removed');
  });

  test('beyond PLAYLINE_QUOTA_ASSETS an upload is 409 quota_exceeded naming the quota, before its body is read', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await t.client.assets.upload(Readable.from([Buffer.alloc(1000, i)]), { title: `n${i}` })).id);
    const disk = onDisk();
    const response = await t.client.core.send('POST', ASSETS, { body: Buffer.alloc(1000, 9), contentType: 'video/mp4' });
    assert.equal(response.status, 409, response.body);
    const problem = JSON.parse(response.body) as { code: string; quota: string; limit: number; used: number; detail: string };
    assert.deepEqual([problem.code, problem.quota, problem.limit, problem.used], ['quota_exceeded', 'assets', 3, 3]);
    assert.match(problem.detail, /PLAYLINE_QUOTA_ASSETS/);
    assert.deepEqual(onDisk(), disk);
    assert.equal((await t.other.client.assets.upload(Readable.from([Buffer.alloc(1000, 1)]))).state.length > 0, true, 'another workspace is not held back');
    for (const id of ids) await t.client.assets.delete(id);
  });
});
