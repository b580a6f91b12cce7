import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readdir, readFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { createTestApp, type TestApp } from '../../../test/helpers/test-app.js';
import { liveInputDir } from '../../platform/media/media-layout.js';
import { mediaRootOf } from '../../platform/media/media-root.js';
import { pushedPlaylistProblems } from './hls-push.js';
import { mediaToolsSkip } from '../../../test/helpers/media.js';
import { eventually } from '../../../test/helpers/eventually.js';

const MiB = 1024 * 1024;

/** A body of `bytes` MPEG-TS sync bytes (0x47: a pushed .ts must start as one) made as it is sent (the sender never holds it). */
const tsBytes = (bytes: number): Readable => {
  let left = bytes;
  const chunk = Buffer.alloc(64 * 1024, 0x47);
  return new Readable({
    read() {
      if (left <= 0) return void this.push(null);
      const size = Math.min(left, chunk.length);
      left -= size;
      this.push(size === chunk.length ? chunk : chunk.subarray(0, size));
    },
  });
};

interface Answer {
  status: number;
  body: string;
}

/** A PUT over a real connection (the server reads the body as a stream, as it would from an encoder). */
const put = (port: number, path: string, body: Readable | string, headers: Record<string, string> = {}): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method: 'PUT', path, headers: { 'content-type': 'application/octet-stream', ...headers } }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      res.on('error', reject);
    });
    // The server may answer and close before the whole body went: that is the point.
    req.on('error', () => undefined);
    if (typeof body === 'string') req.end(body);
    else body.pipe(req);
  });

const skip = await mediaToolsSkip();

describe('hls push: authenticated before the body, streamed to disk, playlists confined to their folder', { skip }, () => {
  let t: TestApp;
  let port: number;
  let dir: string;
  let base: string;
  let slicerId: string;
  before(async () => {
    // No failure pause: the right token is pushed right after the wrong ones from the same address (the pause is tested in live/ingest-admission.test.ts).
    t = await createTestApp({ env: { PLAYLINE_HLS_PUSH_MAX_BYTES_IN_FLIGHT: String(96 * MiB), PLAYLINE_SLICER_PROVISIONER: 'ffmpeg', PLAYLINE_REGIONS: 'eu-central-1', PLAYLINE_INGEST_FAILURE_PAUSE_MS: '0' } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as AddressInfo).port;
    t.runtime.managedSlicers.listening(port);
    // A real hls slicer: its ingest URL (with its stream key) and the input folder its ffmpeg reads.
    const slicer = await t.client.managedSlicers.create({ name: 'Pushed', region: 'eu-central-1', ingest_protocol: 'hls', output_profile: 'passthrough' });
    slicerId = slicer.id;
    await eventually(async () => (await t.client.managedSlicers.getTask(slicer.task.id)).state === 'COMPLETED', 'the slicer runs');
    const ingestUrl = (await t.client.managedSlicers.get(slicerId)).ingest_url ?? '';
    base = new URL(ingestUrl).pathname.replace(/\/index\.m3u8$/, '');
    dir = liveInputDir(mediaRootOf(t.runtime.config), t.workspace.id, slicerId);
  });
  after(() => t.close());

  test('32 parallel unauthenticated 64 MiB PUTs are refused before their bodies are read: server RSS stays within +100 MiB (review N5)', { timeout: 60_000 }, async () => {
    const before = process.memoryUsage().rss;
    let peak = before;
    const sample = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    const answers = await Promise.all(
      Array.from({ length: 32 }, (_, i) => put(port, `/ingest/hls/${t.workspace.id}/${slicerId}/made-up-token/seg${i}.ts`, tsBytes(64 * MiB), { 'content-length': String(64 * MiB) })),
    );
    clearInterval(sample);
    assert.deepEqual(new Set(answers.map((a) => a.status)), new Set([403]));
    assert.ok(peak - before < 100 * MiB, `server RSS grew by ${Math.round((peak - before) / MiB)} MiB`);
    assert.deepEqual(await readdir(dir), [], 'nothing was written');
  });

  test('the right token streams a segment into the slicer folder', async () => {
    const answer = await put(port, `${base}/seg1.ts`, tsBytes(3 * MiB));
    assert.equal(answer.status, 201, answer.body);
    assert.equal((await readFile(`${dir}/seg1.ts`)).length, 3 * MiB);
    assert.equal(t.runtime.managedSlicers.hlsPush.inFlight.bytes, 0, 'the budget is given back');
  });

  test('a playlist naming ../ (another workspace\'s asset) or a URL is refused and not stored (review N6)', async () => {
    const hostile = ['#EXTM3U', '#EXT-X-VERSION:7', '#EXT-X-TARGETDURATION:4', '#EXT-X-MAP:URI="../../../assets/victim/asset/360p/init.mp4"', '#EXTINF:4.0,', '../../../assets/victim/asset/360p/seg_00000.m4s', '#EXT-X-ENDLIST'].join('\n');
    const refused = await put(port, `${base}/index.m3u8`, hostile);
    assert.equal(refused.status, 400, refused.body);
    assert.match(refused.body, /validation_failed/);
    const remote = await put(port, `${base}/index.m3u8`, '#EXTM3U\n#EXTINF:4.0,\nhttp://169.254.169.254/latest/meta-data\n');
    assert.equal(remote.status, 400);
    assert.ok(!(await readdir(dir)).includes('index.m3u8'), 'no playlist was stored');
    assert.ok(!(await readdir(dir)).some((name) => name.endsWith('.tmp')), 'no temporary file is left');

    const good = ['#EXTM3U', '#EXT-X-VERSION:7', '#EXT-X-TARGETDURATION:4', '#EXT-X-MAP:URI="init.mp4"', '#EXTINF:4.0,', 'seg1.m4s', ''].join('\n');
    assert.equal((await put(port, `${base}/index.m3u8`, good)).status, 201);
    assert.equal(await readFile(`${dir}/index.m3u8`, 'utf8'), good);
  });

  test('pushed bytes in flight are capped: beyond the budget a push answers 503 with Retry-After', async () => {
    // Two 64 MiB declarations do not fit a 96 MiB budget together.
    const slow = new Readable({ read() {} });
    slow.push(Buffer.alloc(1, 0x47));
    const first = put(port, `${base}/big1.ts`, slow, { 'content-length': String(64 * MiB) });
    const budget = t.runtime.managedSlicers.hlsPush.inFlight;
    await eventually(() => budget.bytes === 64 * MiB, 'the first push holds its declared bytes');
    const second = await put(port, `${base}/big2.ts`, tsBytes(64 * MiB), { 'content-length': String(64 * MiB) });
    assert.equal(second.status, 503);
    assert.match(second.body, /service_unavailable/);
    slow.push(Buffer.alloc(64 * MiB - 1));
    slow.push(null);
    assert.equal((await first).status, 201);
  });

  test('playlist rules: bare file names only', () => {
    assert.deepEqual(pushedPlaylistProblems('#EXTM3U\n#EXT-X-MAP:URI="init.mp4"\n#EXTINF:2,\nseg_1.m4s\n'), []);
    assert.equal(pushedPlaylistProblems('#EXTM3U\n#EXTINF:2,\nsub/seg.ts\n').length, 1);
    assert.equal(pushedPlaylistProblems('#EXTM3U\n#EXTINF:2,\n.hidden.ts\n').length, 1);
    assert.equal(pushedPlaylistProblems('#EXTM3U\n#EXT-X-KEY:METHOD=AES-128,URI="file:///etc/passwd"\n').length, 1);
    assert.deepEqual(pushedPlaylistProblems('not a playlist'), ['a playlist starts with #EXTM3U']);
  });
});
