import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { systemClock } from '../platform/clock.js';
import type { AssetView } from '../modules/assets/assets.schema.js';
import { makeClip, mediaToolsSkip } from '../../test/helpers/media.js';
import { sharedPlaylineBin } from '../../test/helpers/built-package.js';
import { pacedFfmpeg } from '../../test/helpers/paced-ffmpeg.js';

const skip = await mediaToolsSkip();

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));

describe('playline assets (the CLI over a running server)', { skip }, () => {
  let t: TestApp;
  let url: string;
  let scratch: string;
  before(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'playline-assets-cli-'));
    // The CLI signs with the real time, so the server keeps the real time too. Packaging reads at
    // twice real time, so a clip stays playable-but-not-ready for half its length.
    const ffmpeg = await pacedFfmpeg(scratch, 2);
    t = await createTestApp({ clock: systemClock, env: { PLAYLINE_PACKAGING_LADDER: '144p', PLAYLINE_PACKAGING_PRESET: 'ultrafast', PLAYLINE_FFMPEG_PATH: ffmpeg } });
    url = await t.app.listen({ host: '127.0.0.1', port: 0 });
  });
  after(async () => {
    await t.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  const cli = async (...args: string[]) =>
    run(process.execPath, [await sharedPlaylineBin(), 'assets', ...args, '--base-url', url, '--owner', t.workspace.id], {
      cwd: root,
      env: { ...process.env, PLAYLINE_API_KEY: t.key.secret },
    });

  test('upload --wait --json: progress on stderr, pure JSON of the ready asset on stdout; list, delete', async () => {
    const clip = await makeClip(scratch, 'pattern.mp4', { seconds: 3 });
    const uploaded = await cli('upload', clip, '--wait', '--json');
    const asset = JSON.parse(uploaded.stdout) as AssetView;
    assert.equal(asset.state, 'ready');
    assert.equal(asset.title, 'pattern.mp4');
    assert.deepEqual(asset.renditions.map((r) => r.name), ['144p']);
    assert.match(uploaded.stderr, /uploading pattern\.mp4 \[#+\] 100%/);
    assert.match(uploaded.stderr, /packaging [0-9a-f]{32} \[#{20}\] 100%/);

    const listed = await cli('list');
    assert.match(listed.stdout, new RegExp(`${asset.id}\\s+ready\\s+100\\s+3(\\.\\d+)?\\s+144p\\s+pattern\\.mp4`));

    const deleted = JSON.parse((await cli('delete', asset.id, '--json')).stdout) as { message: string };
    assert.equal(deleted.message, 'Deleted');
    assert.equal((await t.client.assets.list()).page.total_items, 0);
  });

  test('upload --wait playable: returns once the first segments play, while still packaged, with the duration so far', async () => {
    const clip = await makeClip(scratch, 'long.mp4', { seconds: 16 });
    const uploaded = await cli('upload', clip, '--wait', 'playable', '--json');
    const asset = JSON.parse(uploaded.stdout) as AssetView;
    assert.equal(asset.state, 'playable');
    assert.ok(asset.duration_s !== null && asset.duration_s >= 4 && asset.duration_s < 16, `duration so far ${asset.duration_s}`);
    assert.deepEqual(asset.renditions.map((r) => r.name), ['144p']);
    assert.match(uploaded.stderr, /playable \(\d+(\.\d+)? s so far\)/);
    const ready = await t.client.assets.waitUntilPackaged(asset.id, { intervalMs: 200 });
    assert.equal(ready.state, 'ready');
    assert.ok(Math.abs((ready.duration_s ?? 0) - 16) < 0.1);
    await assert.rejects(cli('upload', clip, '--wait', 'soon'), (err: { code: number; stderr: string }) => {
      assert.equal(err.code, 1);
      assert.match(err.stderr, /ready or playable/);
      return true;
    });
    await t.client.assets.delete(asset.id);
  });

  test('a failed packaging exits 1 with the reason', async () => {
    const notes = join(scratch, 'notes.txt');
    writeFileSync(notes, 'no frames here\n');
    await assert.rejects(cli('upload', notes, '--wait', '--title', 'Notes'), (err: { code: number; stdout: string; stderr: string }) => {
      assert.equal(err.code, 1);
      assert.match(err.stderr, /asset [0-9a-f]{32} failed: Not a media file that can be read/);
      assert.match(err.stdout, /state\s+failed/);
      return true;
    });
    // The failed asset keeps its upload: `assets retry` queues it again (and again it fails: it is text).
    const [failed] = (await t.client.assets.list({ state: 'failed' })).page.items;
    assert.ok(failed);
    const retried = JSON.parse((await cli('retry', failed.id, '--json')).stdout) as AssetView;
    assert.deepEqual([retried.id, retried.failure_reason], [failed.id, null]);
    assert.equal((await t.client.assets.waitUntilPackaged(failed.id, { intervalMs: 50 })).state, 'failed');
    await t.client.assets.delete(failed.id);
  });
});
