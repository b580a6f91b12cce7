import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { openSqliteForTest, type TestStorage } from '../../../test/helpers/engines.js';
import { makeClip, mediaToolsSkip } from '../../../test/helpers/media.js';
import { pacedFfmpeg } from '../../../test/helpers/paced-ffmpeg.js';
import { FakeClock } from '../../platform/clock.js';
import { loadConfig } from '../../platform/config.js';
import { directoryBytes } from '../../platform/quota/directory-bytes.js';
import { assetWorkDir } from '../../platform/media/media-layout.js';
import { parseProgressiveManifest, PROGRESSIVE_FILE, readPackagedManifest, writeManifest, type PackagedManifest, type PackagedRendition } from '../../platform/media/packaged-manifest.js';
import { FileMediaLibrary } from '../playback-edge/media-library.js';
import { AssetFiles } from './asset-files.js';
import { FfmpegPackager, packagingLimitsOf, type AssetPackager, type PackagingJob, type PackagingOutcome } from './asset-packager.js';
import { AssetRepository } from './assets.repository.js';
import type { ProgressiveOutput } from './packaging-output.js';
import { PackagingRunner } from './packaging-runner.js';

const WS = 'd'.repeat(32);
const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** Bounded wait for background work that does real file I/O (asserts no duration). */
async function eventually(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await condition()) return;
    await delay(5);
  }
  throw new Error(`never: ${what}`);
}

/** A packager the test drives step by step: it writes what ffmpeg would, and announces it. */
class SteppedPackager implements AssetPackager {
  job: PackagingJob | undefined;
  private settle: ((o: PackagingOutcome) => void) | undefined;
  package(job: PackagingJob): Promise<PackagingOutcome> {
    this.job = job;
    return new Promise((resolve) => {
      this.settle = resolve;
      job.signal.addEventListener('abort', () => resolve({ kind: 'aborted' }), { once: true });
    });
  }
  /** ffmpeg closed segment `n` of the rendition (its init first, under ffmpeg's numbered name). */
  async writeSegment(n: number): Promise<void> {
    const dir = join(this.job?.workDir ?? '', '180p');
    await mkdir(dir, { recursive: true });
    if (n === 0) await writeFile(join(dir, 'init_0.mp4'), 'init');
    await writeFile(join(dir, `seg_0000${n}.m4s`), `segment ${n}`.padEnd(100 + n, '.'));
  }
  /** Announces the first `count` segments, as PlayableSegments does. */
  announce(count: number): void {
    const segments = Array.from({ length: count }, (_, n) => ({ uri: `180p/seg_0000${n}.m4s`, duration_s: 4, bytes: 100 + n }));
    const rendition: PackagedRendition = {
      name: '180p', width: 320, height: 180, bandwidth: 300_000, average_bandwidth: 250_000, codecs: 'avc1.64000d,mp4a.40.2',
      playlist: '180p/playlist.m3u8', init: '180p/init.mp4', segments,
    };
    const output: ProgressiveOutput = {
      manifest: { version: 1, duration_s: count * 4, segment_s: 4, renditions: [rendition], expected_duration_s: 12 },
      links: [{ from: '180p/init_0.mp4', to: '180p/init.mp4' }, ...segments.map((s) => ({ from: s.uri, to: s.uri }))],
    };
    this.job?.onPlayable?.(output);
  }
  /** The end of the run: the rest written, the init renamed and manifest.json last (as buildManifest does). */
  async finish(): Promise<void> {
    const workDir = this.job?.workDir ?? '';
    await this.writeSegment(2);
    await rename(join(workDir, '180p', 'init_0.mp4'), join(workDir, '180p', 'init.mp4'));
    await writeFile(join(workDir, '180p', 'playlist.m3u8'), '#EXTM3U\n');
    await writeFile(join(workDir, 'poster.jpg'), 'jpeg');
    const segments = [0, 1, 2].map((n) => ({ uri: `180p/seg_0000${n}.m4s`, duration_s: 4, bytes: 100 + n }));
    const manifest: PackagedManifest = {
      version: 1, duration_s: 12, segment_s: 4, poster: 'poster.jpg',
      renditions: [{ name: '180p', width: 320, height: 180, bandwidth: 300_000, average_bandwidth: 250_000, codecs: 'avc1.64000d,mp4a.40.2', playlist: '180p/playlist.m3u8', init: '180p/init.mp4', segments }],
    };
    await writeManifest(workDir, manifest);
    this.settle?.({ kind: 'packaged' });
  }
  fail(reason: string): void {
    this.settle?.({ kind: 'failed', reason });
  }
}

describe('progressive packaging: playable while packaged', () => {
  let s: TestStorage;
  let repo: AssetRepository;
  let files: AssetFiles;
  let clock: FakeClock;
  let library: FileMediaLibrary;
  let n = 0;
  const runners: PackagingRunner[] = [];

  before(async () => {
    s = await openSqliteForTest();
    repo = new AssetRepository(s.storage.db);
    files = new AssetFiles(join(s.dataDir, 'media'));
    await files.prepare();
    clock = new FakeClock();
    // The edge's reader of the same media root (another instance reads the shared directory alike).
    library = new FileMediaLibrary({ root: files.root, clock });
    await s.storage.db.insertInto('workspaces').values({ id: WS, name: 'W', created_at: 0 }).execute();
  });
  afterEach(async () => {
    for (const r of runners.splice(0)) await r.stop();
    await s.storage.db.deleteFrom('assets').execute();
  });
  after(() => s.cleanup());

  const start = async (packager: AssetPackager, failed?: () => void) => {
    const r = new PackagingRunner({ store: repo, packager, files, clock, log: silent, ownerId: 'here', exclusive: true, concurrency: 1, leaseMs: 30_000, pollMs: null, ...(failed ? { onFailed: failed } : {}) });
    runners.push(r);
    const id = (++n).toString(16).padStart(32, '0');
    const temp = files.newUploadPath();
    await writeFile(temp, 'media bytes');
    await files.adoptUpload(temp, WS, id);
    await repo.insertWithJob({ id, workspaceId: WS, title: null, sizeBytes: 11, createdAt: clock.now() + n });
    await r.start();
    return id;
  };
  const find = async (id: string) => {
    clock.advance(1_000);
    return library.find(WS, id);
  };
  const storedBytes = async (id: string) => Number((await s.storage.db.selectFrom('assets').select('stored_bytes').where('id', '=', id).executeTakeFirstOrThrow()).stored_bytes);

  test('processing -> playable (duration so far, growing) -> ready: the edge plays the same files under the same names throughout, and the quota counts the output once', async () => {
    const packager = new SteppedPackager();
    const id = await start(packager);
    await eventually(() => packager.job !== undefined, 'running');
    assert.equal((await repo.find(WS, id))?.state, 'processing');
    assert.equal(await find(id), undefined, 'nothing to play before the first segment');

    await packager.writeSegment(0);
    packager.announce(1);
    await eventually(async () => (await repo.find(WS, id))?.state === 'playable', 'playable');
    const playable = await repo.find(WS, id);
    assert.equal(playable?.durationMs, 4000);
    assert.deepEqual(playable?.renditions, [{ name: '180p', width: 320, height: 180, bandwidth: 300_000 }]);
    const early = await find(id);
    assert.equal(early?.complete, false);
    assert.equal(early?.expectedDurationS, 12);
    assert.equal(early?.dir, files.assetDir(WS, id));
    const firstSegment = join(files.assetDir(WS, id), '180p', 'seg_00000.m4s');
    const inode = statSync(firstSegment).ino;
    assert.equal(inode, statSync(join(packager.job?.workDir ?? '', '180p', 'seg_00000.m4s')).ino, 'a link to what ffmpeg wrote, not a copy');
    assert.equal(await storedBytes(id), 11, 'while packaged, the upload is what the workspace stores');

    await packager.writeSegment(1);
    packager.announce(2);
    await eventually(async () => (await repo.find(WS, id))?.durationMs === 8000, 'more playable');
    assert.deepEqual((await find(id))?.manifest.renditions[0]?.segments.map((x) => x.uri), ['180p/seg_00000.m4s', '180p/seg_00001.m4s']);

    await packager.finish();
    await eventually(async () => (await repo.find(WS, id))?.state === 'ready', 'ready');
    assert.equal((await repo.find(WS, id))?.durationMs, 12_000);
    const done = await find(id);
    assert.equal(done?.complete, true);
    assert.equal(done?.dir, early?.dir);
    assert.equal(statSync(firstSegment).ino, inode, 'the segment players fetched is the one kept');
    assert.equal(existsSync(join(files.assetDir(WS, id), PROGRESSIVE_FILE)), false);
    assert.equal(existsSync(assetWorkDir(files.root, WS, id)), false, 'the attempt\'s names are gone; the files stay under the asset\'s');
    assert.equal(await files.hasSource(WS, id), false);
    const m = await readPackagedManifest(files.assetDir(WS, id));
    assert.deepEqual(m.renditions[0]?.segments.map((x) => x.uri), ['180p/seg_00000.m4s', '180p/seg_00001.m4s', '180p/seg_00002.m4s']);
    // Hard links are counted once: the packaged bytes, exactly as a rename would have left them.
    assert.equal(await storedBytes(id), await directoryBytes(files.assetDir(WS, id), 2));
    assert.equal(await storedBytes(id), 'init'.length + 100 + 101 + 102 + '#EXTM3U\n'.length + 'jpeg'.length + statSync(join(files.assetDir(WS, id), 'manifest.json')).size);
  });

  test('a failure midway ends the asset failed, and nothing of it is left to play', async () => {
    const packager = new SteppedPackager();
    let failures = 0;
    const id = await start(packager, () => failures++);
    await eventually(() => packager.job !== undefined, 'running');
    await packager.writeSegment(0);
    packager.announce(1);
    await eventually(async () => (await repo.find(WS, id))?.state === 'playable', 'playable');
    assert.ok(await find(id));
    packager.fail('Packaging failed (the file may be corrupt): Invalid data found when processing input');
    await eventually(() => failures === 1, 'failed');
    const failed = await repo.find(WS, id);
    assert.equal(failed?.state, 'failed');
    assert.match(failed?.failureReason ?? '', /corrupt/);
    // The upload is kept for a retry (issue 36), and counted; nothing of the output is.
    assert.equal(await storedBytes(id), 'media bytes'.length);
    await eventually(() => !existsSync(files.assetDir(WS, id)), 'its files removed');
    assert.equal(await find(id), undefined, 'its sessions are refused (999) from the next request on');
  });

  test('a shutdown midway gives the job back: uploaded again, nothing playable, nothing on disk but the upload', async () => {
    const packager = new SteppedPackager();
    const id = await start(packager);
    await eventually(() => packager.job !== undefined, 'running');
    await packager.writeSegment(0);
    packager.announce(1);
    await eventually(async () => (await repo.find(WS, id))?.state === 'playable', 'playable');
    await runners.splice(0)[0]?.stop();
    const back = await repo.find(WS, id);
    assert.deepEqual([back?.state, back?.durationMs, back?.renditions], ['uploaded', null, []]);
    assert.equal(existsSync(files.assetDir(WS, id)), false);
    assert.equal(await files.hasSource(WS, id), true);
    assert.equal(await find(id), undefined);
  });

  test('an outdated claim cannot make an asset playable', async () => {
    const packager = new SteppedPackager();
    const id = await start(packager);
    await eventually(() => packager.job !== undefined, 'running');
    const written = await repo.setPlayable(id, { owner: 'someone-else', attempt: 1 }, { durationMs: 4000, renditions: [] }, clock.now());
    assert.equal(written, false);
    assert.equal((await repo.find(WS, id))?.state, 'processing');
  });
});

describe('ffmpeg packager: segments announced while it encodes', { skip: await mediaToolsSkip() }, () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'playline-progressive-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('each announcement is a prefix of the final manifest in every rendition, with its codecs, and valid as progressive.json', async () => {
    // 16 s read at 4x real time: about 4 s of encoding, during which segments close every second.
    const ffmpeg = await pacedFfmpeg(dir, 4);
    const packager = new FfmpegPackager({ tools: { ffmpeg, ffprobe: 'ffprobe' }, ladder: [180, 144], preset: 'ultrafast', limits: packagingLimitsOf(loadConfig({})) });
    const source = await makeClip(dir, 'clip.mp4', { seconds: 16 });
    const workDir = join(dir, 'work');
    await mkdir(workDir);
    const outputs: ProgressiveOutput[] = [];
    let returned = false;
    const outcome = await packager.package({
      assetId: 'a'.repeat(32), source, workDir, markerFile: join(workDir, '.process.json'), signal: new AbortController().signal, onProgress: () => undefined,
      onPlayable: (output) => {
        assert.equal(returned, false, 'never after package() returned');
        outputs.push(output);
      },
    });
    returned = true;
    assert.equal(outcome.kind, 'packaged', JSON.stringify(outcome));
    const final = await readPackagedManifest(workDir);
    assert.ok(outputs.length >= 1, 'playable before the end');
    const counts = outputs.map((o) => o.manifest.renditions[0]?.segments.length ?? 0);
    assert.ok(counts.every((c, i) => c >= 1 && (i === 0 || c > (counts[i - 1] ?? 0))), `growing: ${counts.join(',')}`);
    for (const { manifest, links } of outputs) {
      parseProgressiveManifest(JSON.stringify(manifest));
      assert.ok(Math.abs(manifest.expected_duration_s - 16) < 0.1);
      assert.deepEqual(manifest.renditions.map((r) => r.name), ['180p', '144p']);
      for (const [i, r] of manifest.renditions.entries()) {
        const whole = final.renditions[i];
        assert.equal(r.codecs, whole?.codecs, 'the codecs ffmpeg names at the end');
        assert.equal(r.init, whole?.init);
        assert.deepEqual(r.segments, whole?.segments.slice(0, r.segments.length), 'segments never change once announced');
        assert.equal(r.segments.length, manifest.renditions[0]?.segments.length, 'every rendition offers the same seconds');
      }
      for (const l of links) assert.ok(existsSync(join(workDir, l.from)) || l.from.includes('init_'), `${l.from} exists`);
    }
  });
});
