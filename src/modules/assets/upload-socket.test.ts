import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { request } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { createTestApp, type TestApp } from '../../../test/helpers/test-app.js';
import { mediaToolsSkip } from '../../../test/helpers/media.js';
import { assetLibraryDirs } from '../../platform/media/media-layout.js';

// Without ffmpeg the asset routes answer 503 before any body is read.
const skip = await mediaToolsSkip();

/** Polls a condition over real socket I/O (bounded; asserts no duration). */
async function eventually(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await condition()) return;
    await delay(10);
  }
  throw new Error(`never: ${what}`);
}

const entries = (dir: string) => (existsSync(dir) ? readdirSync(dir) : []);

describe('uploads over a real socket', { skip }, () => {
  let t: TestApp;
  let base: URL;
  let uploads: string;
  before(async () => {
    t = await createTestApp({ env: { PLAYLINE_MAX_UPLOAD_BYTES: String(4 * 1024 * 1024) } });
    base = new URL(await t.app.listen({ host: '127.0.0.1', port: 0 }));
    uploads = assetLibraryDirs(t.runtime.assets.files.root).uploads;
  });
  after(() => t.close());

  const open = (headers: Record<string, string>) =>
    request({ host: base.hostname, port: base.port, method: 'POST', path: t.client.core.signedPath('/api/v4/assets'), headers: { 'content-type': 'video/mp4', ...headers } });

  test('an upload cut in the middle (the client goes away) leaves no file and no asset', async () => {
    const req = open({ 'content-length': String(3 * 1024 * 1024) });
    req.on('error', () => undefined);
    req.write(Buffer.alloc(256 * 1024, 7));
    await eventually(() => entries(uploads).length === 1, 'the upload being received');
    req.destroy();
    await eventually(() => entries(uploads).length === 0, 'the partial upload removed');
    assert.equal((await t.client.assets.list()).page.total_items, 0);
    assert.deepEqual(entries(assetLibraryDirs(t.runtime.assets.files.root).sources), []);
  });

  test('a bad title is refused before any of the body is read', async () => {
    const req = request({
      host: base.hostname, port: base.port, method: 'POST',
      path: t.client.core.signedPath('/api/v4/assets', { title: '\u0001' }),
      headers: { 'content-type': 'video/mp4', 'content-length': String(3 * 1024 * 1024) },
    });
    // Headers only: either the answer comes at once, or the server starts receiving a body (a file appears).
    req.flushHeaders();
    const answered = new Promise<number | undefined>((resolve, reject) => {
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode);
      });
      req.on('error', reject);
    });
    let done = false;
    void answered.finally(() => (done = true));
    const receiving = (async () => {
      for (; !done; await delay(5)) if (entries(uploads).length > 0) return 'receiving the body' as const;
      return undefined;
    })();
    const status = await Promise.race([answered, receiving]);
    req.destroy();
    assert.equal(status, 400);
    assert.deepEqual(entries(uploads), []);
  });

  test('beyond the limit the client gets its 413 (not a reset) and nothing stays', async () => {
    const req = open({ 'transfer-encoding': 'chunked' });
    const answer = new Promise<{ status: number | undefined; body: string }>((resolve, reject) => {
      req.on('response', (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode, body }));
      });
      req.on('error', reject);
    });
    const chunk = Buffer.alloc(512 * 1024, 1);
    for (let i = 0; i < 9 && !req.destroyed; i++) req.write(chunk);
    const { status, body } = await answer;
    assert.equal(status, 413);
    assert.equal((JSON.parse(body) as { code: string }).code, 'payload_too_large');
    req.destroy();
    await eventually(() => entries(uploads).length === 0, 'the partial upload removed');
    assert.equal((await t.client.assets.list()).page.total_items, 0);
  });
});
