import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { createTestApp, type TestApp } from '../../../test/helpers/test-app.js';
import { PlaylineApiError } from '../../client/index.js';
import { FakeClock } from '../../platform/clock.js';
import { assetDir, assetLibraryDirs } from '../../platform/media/media-layout.js';
import { readPackagedManifest } from '../../platform/media/packaged-manifest.js';
import type { AssetView } from './assets.schema.js';
import { codecsOfSegment, makeClip, mediaToolsSkip } from '../../../test/helpers/media.js';

const skip = await mediaToolsSkip();

const ASSETS = '/api/v4/assets';

/** The upload is removed just after the asset's state is written: wait for it (bounded, no duration asserted). */
async function eventually(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  assert.ok(condition(), what);
}

/** Files under a directory, relative, sorted (empty when it does not exist). */
const filesUnder = (dir: string): string[] =>
  existsSync(dir) ? (readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name).slice(dir.length + 1)).sort()) : [];

describe('asset routes', { skip }, () => {
  let t: TestApp;
  let scratch: string;
  let media: string;
  let clip: string;
  /** For tests that do not look at the packaged result: one second, one small rendition. */
  let short: string;
  const clock = new FakeClock();

  before(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'playline-assets-routes-'));
    clip = await makeClip(scratch, 'clip.mp4', { seconds: 5 });
    short = await makeClip(scratch, 'short.mp4', { seconds: 1, width: 160, height: 90 });
    t = await createTestApp({ clock, env: { PLAYLINE_PACKAGING_LADDER: '180p,144p', PLAYLINE_PACKAGING_PRESET: 'ultrafast' } });
    media = t.runtime.assets.files.root;
  });
  after(async () => {
    await t.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  const waitPackaged = (id: string, client = t.client) => client.assets.waitUntilPackaged(id, { intervalMs: 20 });

  test('upload -> ready: a 201 at once, then renditions, poster, and the packaged layout on disk', async () => {
    const response = await t.client.core.send('POST', ASSETS, { body: readFileSync(clip), contentType: 'video/mp4', query: { title: 'Test pattern' } });
    assert.equal(response.status, 201, response.body);
    const created = JSON.parse(response.body) as AssetView;
    assert.match(created.id, /^[0-9a-f]{32}$/);
    assert.equal(response.headers.location, `${ASSETS}/${created.id}`);
    assert.equal(created['@id'], `${ASSETS}/${created.id}`);
    assert.equal(created['@type'], 'Asset');
    assert.equal(created.title, 'Test pattern');
    assert.ok(['uploaded', 'processing'].includes(created.state), created.state);
    assert.equal(created.size_bytes, readFileSync(clip).length);
    assert.deepEqual([created.renditions, created.poster, created.failure_reason, created.duration_s], [[], null, null, null]);

    const ready = await waitPackaged(created.id);
    assert.equal(ready.state, 'ready', JSON.stringify(ready));
    assert.equal(ready.progress, 100);
    assert.ok(ready.duration_s !== null && Math.abs(ready.duration_s - 5) < 0.1, String(ready.duration_s));
    assert.deepEqual(ready.renditions.map((r) => [r.name, r.width, r.height]), [['180p', 320, 180], ['144p', 256, 144]]);
    assert.ok(ready.renditions.every((r) => r.bandwidth > 0));
    assert.equal(ready.poster, `${ASSETS}/${created.id}/poster.jpg`);

    const dir = assetDir(media, t.workspace.id, created.id);
    await readPackagedManifest(dir);
    assert.deepEqual(filesUnder(dir), [
      '144p/init.mp4', '144p/playlist.m3u8', '144p/seg_00000.m4s', '144p/seg_00001.m4s',
      '180p/init.mp4', '180p/playlist.m3u8', '180p/seg_00000.m4s', '180p/seg_00001.m4s',
      'manifest.json', 'poster.jpg',
    ]);
    assert.deepEqual(await codecsOfSegment(join(dir, '180p/init.mp4'), join(dir, '180p/seg_00000.m4s'), scratch), ['aac', 'h264']);
    await eventually(() => filesUnder(assetLibraryDirs(media).sources).length === 0, 'the upload is gone once packaged');
    assert.deepEqual(filesUnder(assetLibraryDirs(media).uploads), []);

    const poster = await t.client.core.send('GET', ready.poster ?? '');
    assert.equal(poster.status, 200);
    assert.equal(poster.headers['content-type'], 'image/jpeg');

    const renamed = await t.client.assets.update(created.id, { title: 'Renamed' });
    assert.equal(renamed.title, 'Renamed');
    const { page } = await t.client.assets.list();
    assert.equal(page['@type'], 'Collection');
    assert.ok(page.items.some((a) => a.id === created.id && a.state === 'ready'));

    const deleted = await t.client.assets.delete(created.id);
    assert.deepEqual(deleted, { '@id': `${ASSETS}/${created.id}`, '@type': 'Asset', id: created.id, message: 'Deleted' });
    assert.equal(existsSync(dir), false, 'DELETE removes the directory');
    assert.equal((await t.client.core.send('GET', `${ASSETS}/${created.id}`)).status, 404);
  });

  test('a non-media upload ends failed with a clear reason, leaving only its upload (for a retry) until it is deleted', async () => {
    const asset = await t.client.assets.upload(Readable.from([Buffer.from('just some text, no frames at all\n'.repeat(50))]), { title: 'notes.txt' });
    const failed = await waitPackaged(asset.id);
    assert.equal(failed.state, 'failed');
    assert.equal(failed.failure_reason, 'Not a media file that can be read (Invalid data found when processing input)');
    assert.equal(failed.poster, null);
    const { uploads, sources, work } = assetLibraryDirs(media);
    for (const dir of [uploads, work]) await eventually(() => filesUnder(dir).length === 0, `${dir} is empty`);
    assert.equal(filesUnder(sources).length, 1, 'the upload is kept');
    assert.equal(existsSync(assetDir(media, t.workspace.id, asset.id)), false);
    // Retried, the same file fails the same way: its upload stays.
    assert.equal((await t.client.assets.retry(asset.id)).failure_reason, null);
    assert.equal((await waitPackaged(asset.id)).failure_reason, failed.failure_reason);
    assert.equal(filesUnder(sources).length, 1);
    await t.client.assets.delete(asset.id);
    assert.equal(filesUnder(sources).length, 0, 'deleted: the upload goes');
  });

  test('SDK: upload from a path (streamed, progress reported, title from the file name), list pages newest first', async () => {
    const seen: Array<[number, number | undefined]> = [];
    const first = await t.client.assets.upload(short, { onProgress: (sent, total) => seen.push([sent, total]) });
    assert.equal(first.title, 'short.mp4');
    const size = readFileSync(short).length;
    assert.deepEqual(seen.at(-1), [size, size]);
    clock.advance(1000);
    const second = await t.client.assets.upload(short, { title: 'second' });
    const one = await t.client.assets.list({ limit: 1 });
    assert.deepEqual(one.page.items.map((a) => a.id), [second.id]);
    assert.equal(one.page.total_items, 2);
    assert.ok(one.nextCursor);
    const two = await t.client.assets.list({ limit: 1, cursor: one.nextCursor });
    assert.deepEqual(two.page.items.map((a) => a.id), [first.id]);
    assert.equal(two.nextCursor, undefined);
    const all = await t.client.assets.list();
    assert.deepEqual(all.page.items.map((a) => a.id), [second.id, first.id], 'without limit: every asset, newest first');
    assert.equal(all.nextCursor, undefined);
    assert.equal(all.page['@id'], ASSETS);
    // Deleting stops a packaging still running.
    for (const a of [first, second]) await t.client.assets.delete(a.id);
  });

  test('errors: not a media content type, empty body, bad title, bad cursor, unknown PATCH field', async () => {
    const json = await t.client.core.send('POST', ASSETS, { body: { url: 'http://example.com/a.mp4' } });
    assert.equal(json.status, 415);
    assert.equal(JSON.parse(json.body).code, 'unsupported_media_type');
    const bigJson = await t.client.core.send('POST', ASSETS, { body: JSON.stringify({ pad: 'x'.repeat(1_200_000) }), contentType: 'application/json' });
    assert.equal(bigJson.status, 413, 'a JSON body keeps the 1 MiB limit (never buffered up to the upload limit)');
    const empty = await t.client.core.send('POST', ASSETS, { body: Buffer.alloc(0), contentType: 'video/mp4' });
    assert.equal(empty.status, 400);
    const badTitle = await t.client.core.send('POST', ASSETS, { body: Buffer.from('x'), contentType: 'video/mp4', query: { title: '\u0007' } });
    assert.equal(badTitle.status, 400);
    assert.equal(JSON.parse(badTitle.body).code, 'validation_failed');
    const badHeader = await t.client.core.send('POST', ASSETS, { body: Buffer.from('x'), contentType: 'video/mp4', headers: { 'x-asset-title': '%E0%A4%A' } });
    assert.equal(badHeader.status, 400);
    const cursor = await t.client.core.send('GET', ASSETS, { query: { cursor: 'nope' } });
    assert.equal(cursor.status, 400);
    const media2 = await t.client.assets.upload(short, { title: 'patch me' });
    const patch = await t.client.core.send('PATCH', `${ASSETS}/${media2.id}`, { body: { title: 'ok', state: 'ready' } });
    assert.equal(patch.status, 400);
    await t.client.assets.delete(media2.id);
    assert.deepEqual(filesUnder(assetLibraryDirs(media).uploads), [], 'refused uploads leave no file');
    assert.equal((await t.client.assets.list()).page.total_items, 0, 'and no asset');
  });

  test('the title may come in a percent-encoded X-Asset-Title header', async () => {
    const response = await t.client.core.send('POST', ASSETS, { body: readFileSync(short), contentType: 'video/mp4', headers: { 'x-asset-title': encodeURIComponent('Café №5') } });
    assert.equal(response.status, 201);
    const asset = JSON.parse(response.body) as AssetView;
    assert.equal(asset.title, 'Café №5');
    await t.client.assets.delete(asset.id);
  });

  test('metrics: assets by state, packaging jobs, failures', async () => {
    const metric = async (name: string) => {
      const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
      const line = text.split('\n').find((l) => l.startsWith(`${name} `));
      return Number(line?.split(' ')[1] ?? 'NaN');
    };
    const failuresBefore = await metric('playline_assets_packaging_failures_total');
    const readyBefore = await metric('playline_assets{state="ready"}');
    const good = await t.client.assets.upload(short, { title: 'good' });
    const bad = await t.client.assets.upload(Readable.from([Buffer.from('not media at all')]), { title: 'bad' });
    await waitPackaged(good.id);
    await waitPackaged(bad.id);
    assert.equal(await metric('playline_assets{state="ready"}'), readyBefore + 1);
    assert.equal(await metric('playline_assets{state="failed"}'), 1);
    // The runner counts and cleans up just after it records the state: read until it is done.
    const settled = async (name: string, expected: number) => {
      let value = NaN;
      for (let i = 0; i < 200 && value !== expected; i++) {
        value = await metric(name);
        if (value !== expected) await new Promise((resolve) => setTimeout(resolve, 5));
      }
      return value;
    };
    assert.equal(await settled('playline_assets_packaging_failures_total', failuresBefore + 1), failuresBefore + 1);
    assert.equal(await metric('playline_assets_packaging_jobs{state="queued"}'), 0);
    assert.equal(await metric('playline_assets_packaging_jobs{state="running"}'), 0);
    assert.equal(await settled('playline_assets_packaging_running_here', 0), 0);
    await t.client.assets.delete(good.id);
    await t.client.assets.delete(bad.id);
  });

  test('security: unsigned is 401; another workspace\'s asset is 404 for every route', async () => {
    const asset = await t.client.assets.upload(short, { title: 'mine' });
    const unsigned = await t.app.inject({ method: 'GET', url: `${ASSETS}/${asset.id}` });
    assert.equal(unsigned.statusCode, 401);
    const unsignedUpload = await t.app.inject({ method: 'POST', url: ASSETS, headers: { 'content-type': 'video/mp4' }, payload: Buffer.from('x') });
    assert.equal(unsignedUpload.statusCode, 401);
    const other = t.other.client.core;
    for (const [method, path, body] of [
      ['GET', `${ASSETS}/${asset.id}`, undefined],
      ['GET', `${ASSETS}/${asset.id}/poster.jpg`, undefined],
      ['PATCH', `${ASSETS}/${asset.id}`, { title: 'stolen' }],
      ['DELETE', `${ASSETS}/${asset.id}`, undefined],
    ] as const) {
      const response = await other.send(method, path, body === undefined ? {} : { body });
      assert.equal(response.status, 404, `${method} ${path}`);
      assert.equal(JSON.parse(response.body).code, 'not_found');
    }
    assert.equal((await t.other.client.assets.list()).page.total_items, 0);
    assert.equal((await t.client.assets.get(asset.id)).title, 'mine', 'untouched');
    await t.client.assets.delete(asset.id);
  });
});

describe('asset routes with limits and without media tools', () => {
  test('an upload beyond PLAYLINE_MAX_UPLOAD_BYTES is 413 and leaves no file', { skip }, async () => {
    const t = await createTestApp({ env: { PLAYLINE_MAX_UPLOAD_BYTES: '1000' } });
    try {
      const declared = await t.client.core.send('POST', ASSETS, { body: Buffer.alloc(5000, 1), contentType: 'video/mp4' });
      assert.equal(declared.status, 413);
      assert.equal(JSON.parse(declared.body).code, 'payload_too_large');
      // Without a Content-Length (chunked), the count stops it.
      const streamed = await t.client.core.send('POST', ASSETS, { body: Readable.from([Buffer.alloc(600, 1), Buffer.alloc(600, 2)]), contentType: 'video/mp4' });
      assert.equal(streamed.status, 413);
      assert.deepEqual(filesUnder(assetLibraryDirs(t.runtime.assets.files.root).uploads), []);
      assert.equal((await t.client.assets.list()).page.total_items, 0);
    } finally {
      await t.close();
    }
  });

  test('media routes answer 503 media_tools_missing with the install hint; the rest of the API works', async () => {
    const t = await createTestApp({ env: { PLAYLINE_FFMPEG_PATH: '/nonexistent/ffmpeg' } });
    try {
      for (const [method, path] of [['GET', ASSETS], ['POST', ASSETS], ['GET', `${ASSETS}/${'0'.repeat(32)}`], ['DELETE', `${ASSETS}/${'0'.repeat(32)}`]] as const) {
        const response = await t.client.core.send(method, path, method === 'POST' ? { body: Buffer.from('x'), contentType: 'video/mp4' } : {});
        assert.equal(response.status, 503, `${method} ${path}`);
        const problem = JSON.parse(response.body) as { code: string; detail: string; hint: string };
        assert.equal(problem.code, 'media_tools_missing');
        assert.match(problem.detail, /ffmpeg not found \(\/nonexistent\/ffmpeg\)/);
        assert.match(problem.detail, /apt-get install ffmpeg/);
        assert.match(problem.hint, /PLAYLINE_FFMPEG_PATH/);
      }
      assert.equal((await t.client.core.send('GET', '/api/v4/workspace')).status, 200);
      await assert.rejects(t.client.assets.list(), (err: unknown) => err instanceof PlaylineApiError && err.status === 503);
    } finally {
      await t.close();
    }
  });
});
