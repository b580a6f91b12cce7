import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createTestApp, type TestApp } from '../../../test/helpers/test-app.js';
import { makeClip, mediaToolsSkip } from '../../../test/helpers/media.js';
import { PlaylineApiError } from '../../client/index.js';
import { FakeClock, systemClock } from '../../platform/clock.js';
import { loadConfig } from '../../platform/config.js';
import { FfmpegPackager, packagingLimitsOf, type AssetPackager } from './asset-packager.js';

const skip = await mediaToolsSkip();
const stressSkip = await promisify(execFile)('stress-ng', ['--version']).then(() => false, () => 'stress-ng is not installed');

/** Bounded wait for the file work that follows a state change (asserts no duration). */
async function eventually(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  assert.ok(condition(), what);
}

/**
 * Issue 36: "a valid upload fails on a busy machine, and the source is deleted". A failed asset
 * keeps its upload (counted in storage) until it is deleted or retried; POST .../retry packages
 * it again. The first packaging of each asset here fails by a limit (the memory limit, so the
 * failure does not depend on the machine's speed); the retry runs with the shipped budgets beside
 * a CPU burner (stress-ng --cpu 4), where the old wall-clock budget failed valid uploads.
 */
describe('a failed asset keeps its upload and is packaged again by POST /assets/<id>/retry', { skip: skip || stressSkip }, () => {
  let t: TestApp;
  let scratch: string;
  let clip: string;
  const firstTried = new Set<string>();

  before(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'playline-assets-retry-'));
    clip = await makeClip(scratch, 'clip.mp4', { seconds: 6, width: 320, height: 180 });
    const tools = { ffmpeg: 'ffmpeg', ffprobe: 'ffprobe' };
    const shipped = packagingLimitsOf(loadConfig({}));
    const options = { tools, ladder: [180, 144], preset: 'ultrafast', clock: systemClock };
    const starved = new FfmpegPackager({ ...options, limits: { ...shipped, memoryLimitBytes: 64 * 1024 * 1024 } });
    const normal = new FfmpegPackager({ ...options, limits: shipped });
    const packager: AssetPackager = {
      package: (job) => {
        const first = !firstTried.has(job.assetId);
        firstTried.add(job.assetId);
        return (first ? starved : normal).package(job);
      },
    };
    t = await createTestApp({ clock: new FakeClock(), overrides: { assets: { packager } } });
  });
  after(async () => {
    await t.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  const storageUsed = async () => {
    const usage = (await t.client.core.request('GET', '/api/v4/workspace/usage')) as { quotas: { storage_bytes?: { used: number } } };
    return usage.quotas.storage_bytes?.used;
  };

  test('failed: the upload is kept and counted; retried beside a CPU burner: ready, the upload gone; a retry of a ready or unknown asset is refused', async () => {
    const created = await t.client.assets.upload(clip);
    const failed = await t.client.assets.waitUntilPackaged(created.id, { intervalMs: 20 });
    assert.equal(failed.state, 'failed');
    assert.match(failed.failure_reason ?? '', /64 MiB/);
    const source = t.runtime.assets.files.sourcePath(t.workspace.id, created.id);
    await eventually(() => !existsSync(t.runtime.assets.files.assetDir(t.workspace.id, created.id)), 'the output removed');
    assert.equal(existsSync(source), true, 'the upload is kept');
    assert.equal(await storageUsed(), statSync(source).size, 'and counted in the storage quota until deleted or retried');

    const burner = spawn('stress-ng', ['--cpu', '4', '--timeout', '900s', '--quiet'], { stdio: 'ignore' });
    try {
      const queued = await t.client.assets.retry(created.id);
      assert.ok(['uploaded', 'processing', 'playable', 'ready'].includes(queued.state), queued.state);
      assert.equal(queued.failure_reason, null);
      const ready = await t.client.assets.waitUntilPackaged(created.id, { intervalMs: 50 });
      assert.equal(ready.state, 'ready', ready.failure_reason ?? '');
    } finally {
      burner.kill('SIGKILL');
    }
    await eventually(() => !existsSync(source), 'the upload removed once ready');

    const again = await t.client.assets.retry(created.id).catch((e: unknown) => e);
    assert.ok(again instanceof PlaylineApiError);
    assert.deepEqual([again.status, again.code], [409, 'conflict']);
    const theirs = await t.other.client.assets.retry(created.id).catch((e: unknown) => e);
    assert.ok(theirs instanceof PlaylineApiError);
    assert.equal(theirs.status, 404, 'another workspace cannot retry it');
    await t.client.assets.delete(created.id);
  });

  test('a failed asset deleted takes its kept upload with it', async () => {
    const created = await t.client.assets.upload(clip);
    assert.equal((await t.client.assets.waitUntilPackaged(created.id, { intervalMs: 20 })).state, 'failed');
    const source = t.runtime.assets.files.sourcePath(t.workspace.id, created.id);
    assert.equal(existsSync(source), true);
    await t.client.assets.delete(created.id);
    assert.equal(existsSync(source), false);
    assert.equal(await storageUsed(), 0);
  });
});
