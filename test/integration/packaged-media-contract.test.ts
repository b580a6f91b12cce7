import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AssetFiles } from '../../src/modules/assets/asset-files.js';
import { FfmpegPackager, packagingLimitsOf } from '../../src/modules/assets/asset-packager.js';
import { loadConfig } from '../../src/platform/config.js';
import { FileMediaLibrary } from '../../src/modules/playback-edge/media-library.js';
import { FakeClock } from '../../src/platform/clock.js';
import { POSTER_FILE } from '../../src/platform/media/packaged-manifest.js';
import { codecsOfSegment, makeClip, mediaToolsSkip } from '../helpers/media.js';

const skip = await mediaToolsSkip();

/**
 * The packaged-media contract without a browser: what the asset library's real packager writes
 * and publishes is what the playback edge's reader takes as a playable asset.
 */
describe('packaged media: the asset library writes, the playback edge reads', { skip }, () => {
  const OWNER = 'e'.repeat(32);
  const ASSET = '0123456789abcdef0123456789abcdef';
  let scratch: string;
  before(() => {
    scratch = mkdtempSync(join(tmpdir(), 'playline-packaged-contract-'));
  });
  after(() => rmSync(scratch, { recursive: true, force: true }));

  test('2 s of test pattern packaged by FfmpegPackager is found by FileMediaLibrary with every rendition and file', async () => {
    const files = new AssetFiles(join(scratch, 'media'));
    await files.prepare();
    await files.adoptUpload(await makeClip(scratch, 'clip.mp4', { seconds: 2, width: 160, height: 90 }), OWNER, ASSET);
    const attempt = await files.prepareAttempt(OWNER, ASSET, 1);
    const packager = new FfmpegPackager({ tools: { ffmpeg: 'ffmpeg', ffprobe: 'ffprobe' }, ladder: [90, 72], preset: 'ultrafast', limits: packagingLimitsOf(loadConfig({})) });
    const outcome = await packager.package({ assetId: ASSET, source: files.sourcePath(OWNER, ASSET), ...attempt, signal: new AbortController().signal, onProgress: () => undefined });
    assert.deepEqual(outcome, { kind: 'packaged' });
    await files.publish(OWNER, ASSET, attempt.workDir);

    const asset = await new FileMediaLibrary({ root: files.root, clock: new FakeClock(), onError: (message, error) => assert.fail(`${message}: ${String(error)}`) }).find(OWNER, ASSET);
    assert.ok(asset, 'the edge finds a playable asset');
    assert.equal(asset.dir, files.assetDir(OWNER, ASSET));
    assert.deepEqual([...asset.renditions.values()].map((r) => [r.name, r.width, r.height]), [['90p', 160, 90], ['72p', 128, 72]]);
    assert.ok(Math.abs(asset.manifest.duration_s - 2) < 0.1, `duration ${asset.manifest.duration_s}`);
    for (const r of asset.renditions.values()) {
      assert.ok(asset.files.has(r.init) && r.segments.length > 0 && r.segments.every((s) => asset.files.has(s.uri)));
      for (const s of r.segments) assert.equal(statSync(join(asset.dir, s.uri)).size, s.bytes, `${s.uri} is the size the manifest says`);
      assert.deepEqual(await codecsOfSegment(join(asset.dir, r.init), join(asset.dir, r.segments[0]?.uri ?? ''), scratch), ['aac', 'h264']);
    }
    assert.equal(asset.files.size, [...asset.renditions.values()].reduce((n, r) => n + 1 + r.segments.length, 0), 'the files a session may fetch: inits and segments, nothing else');
    assert.ok(asset.manifest.poster === POSTER_FILE && existsSync(join(asset.dir, POSTER_FILE)));
  });
});
