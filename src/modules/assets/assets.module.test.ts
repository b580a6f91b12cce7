import { noOperationalEvents } from '../../platform/operational-events.js';
import { after, before, describe, test } from 'node:test';
import { eventually } from '../../../test/helpers/eventually.js';
import assert from 'node:assert/strict';
import { playline } from '../../../test/helpers/cli.js';
import { openSqliteForTest, type TestStorage } from '../../../test/helpers/engines.js';
import { FakeClock } from '../../platform/clock.js';
import { ConfigError, loadConfig } from '../../platform/config.js';
import { Metrics } from '../../platform/http/metrics.js';
import { sequentialIds } from '../../platform/ids.js';
import type { MediaTools } from '../../platform/media/media-tools.js';
import { createAssets, type AssetsDeps } from './assets.module.js';
import { createQuotas } from '../../platform/quota/quotas.js';

const found: MediaTools = { available: true, ffmpeg: 'ffmpeg', ffprobe: 'ffprobe', ffmpegVersion: '5.1', ffprobeVersion: '5.1' };
const missing: MediaTools = { available: false, reason: 'ffmpeg not found (ffmpeg). Install it' };
const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };

describe('asset library start-up', () => {
  let s: TestStorage;
  before(async () => {
    s = await openSqliteForTest();
  });
  after(() => s.cleanup());

  const assetsWith = (mode: 'embedded' | 'cluster', tools: MediaTools, env: Record<string, string> = {}, config = loadConfig({ PLAYLINE_DATA_DIR: s.dataDir, ...env }), onMediaTools: AssetsDeps['onMediaTools'] = () => undefined) =>
    createAssets({
      config,
      mode,
      clock: new FakeClock(),
      ids: sequentialIds(),
      storage: s.storage,
      metrics: new Metrics(),
      log: silent,
      mediaTools: () => tools,
      quotas: createQuotas({ db: s.storage.db, clock: new FakeClock(), config, mode, registry: new Metrics().registry }),
      events: noOperationalEvents,
      onMediaTools,
    });

  test('cluster mode with ffmpeg present refuses to start without PLAYLINE_MEDIA_DIR, naming the setting', async () => {
    const assets = assetsWith('cluster', found);
    await assert.rejects(assets.work.start(), (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.match(err.message, /PLAYLINE_MEDIA_DIR \(--media-dir\)/);
      assert.match(err.message, /shared by every instance/);
      return true;
    });
  });

  test('cluster mode starts with a shared media directory; without ffmpeg it needs none', async () => {
    const shared = assetsWith('cluster', found, { PLAYLINE_MEDIA_DIR: `${s.dataDir}/shared-media` });
    await shared.work.start();
    assert.equal(shared.files.root, `${s.dataDir}/shared-media`);
    assert.equal(shared.tools()?.available, true);
    await shared.work.stop();

    const without = assetsWith('cluster', missing);
    await without.work.start();
    assert.equal(without.tools()?.available, false);
    assert.throws(() => without.service.assertAvailable(), /ffmpeg not found/);
    await without.work.stop();
  });

  test('embedded mode keeps media in <data dir>/media', async () => {
    const assets = assetsWith('embedded', found);
    assert.throws(() => assets.service.assertAvailable(), /still being looked for/, 'unavailable until start-up looked');
    await assets.work.start();
    assert.equal(assets.files.root, `${s.dataDir}/media`);
    assert.doesNotThrow(() => assets.service.assertAvailable());
    await assets.work.stop();
  });

  test('tools missing at start-up but found by a later look: the library becomes available without a restart', async () => {
    let tell: ((tools: MediaTools & { available: true }) => void) | undefined;
    const assets = assetsWith('embedded', missing, {}, undefined, (listener) => {
      tell = listener;
    });
    await assets.work.start();
    assert.throws(() => assets.service.assertAvailable(), /ffmpeg not found/);
    assert.ok(tell, 'the library listens for a later look');
    if (found.available) tell(found);
    await eventually(() => assets.tools()?.available === true, 'the library started once told');
    assert.doesNotThrow(() => assets.service.assertAvailable());
    await assets.work.stop();
  });

  // 17 rungs: one rendition more than a packaged manifest holds (finding F1).
  const seventeen = Array.from({ length: 17 }, (_, i) => `${1000 + i}p`).join(',');

  test('a ladder the manifest cannot hold is refused as the runtime is created, before any start, naming the setting', () => {
    // A configuration built without loadConfig (its check passed by) is refused all the same.
    const config = { ...loadConfig({ PLAYLINE_DATA_DIR: s.dataDir }), packagingLadder: seventeen };
    assert.throws(() => assetsWith('embedded', found, {}, config), (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.match(err.message, /PLAYLINE_PACKAGING_LADDER \(--packaging-ladder\): 17 rungs, but a packaged asset holds at most 16 renditions/);
      return true;
    });
  });

  test('playline serve with such a ladder exits at once with a message naming it, before it listens', async () => {
    const result = await playline(['serve', '--port', '0', '--data-dir', s.dataDir], { PLAYLINE_PACKAGING_LADDER: seventeen }, { timeoutMs: 30_000 });
    assert.equal(result.status, 1, result.stderr);
    assert.match(result.stderr, /^playline: Invalid setting PLAYLINE_PACKAGING_LADDER \(--packaging-ladder\): 17 rungs/m);
    assert.doesNotMatch(result.stdout, /listening/i);
  });
});
