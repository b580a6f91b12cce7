import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { driveClock, placeFakeAssets } from '../modules/playback-edge/testing/edge-test-kit.js';
import { playbackErrorMeaning } from '../modules/vod-stats/playback-error-codes.js';
import type { FakeClock } from '../platform/clock.js';
import { SIM, badSessions, goodSession, type SimulatedViewer } from './simulated-urls.js';
import { prepareCatalogue } from './simulator-setup.js';

describe('simulated viewers: each bad session fails with its code, good ones play', () => {
  let t: TestApp;
  let viewer: (n: number) => SimulatedViewer;
  before(async () => {
    t = await createTestApp();
    // Viewers 1-40 run the recipes, 100 and 101 the good sessions.
    const assets = [...Array.from({ length: 40 }, (_, n) => `sim-asset-${n + 1}`), 'sim-asset-100', 'sim-asset-101'];
    await placeFakeAssets(t, t.workspace.id, [...assets, 'sim-ad']);
    await placeFakeAssets(t, t.other.workspace.id, ['sim-ad']);
    const appKeySecret = await prepareCatalogue(t.client, 'sim-ad');
    await prepareCatalogue(t.other.client, 'sim-ad');

    viewer = (n) => ({
      owner: t.workspace.id,
      apiKey: t.key.secret,
      appKeySecret,
      contentOwner: t.other.workspace.id,
      assetId: `sim-asset-${n}`,
      nowS: Math.floor(t.clock.now() / 1000),
      nonce: `n${n}`,
      session: `sim-session-${n}`,
    });
  });
  after(() => t.close());

  const get = async (url: string) => {
    const response = await driveClock(Promise.resolve(t.app.inject({ method: 'GET', url })), t.clock as FakeClock, 100);
    return { status: response.statusCode, code: response.headers['x-playback-error-code'] };
  };

  test('every code has a recipe', () => {
    assert.deepEqual(Object.keys(badSessions), Object.keys(playbackErrorMeaning));
  });

  test('the recipes', async () => {
    let n = 0;
    for (const [code, recipe] of Object.entries(badSessions)) {
      const urls = recipe(viewer(++n));
      const answers = [];
      for (const url of urls) answers.push(await get(url));
      assert.deepEqual(answers.slice(0, -1).map((a) => a.status), urls.slice(0, -1).map(() => 200), `code ${code}: the requests before the last play`);
      assert.equal(answers.at(-1)?.code, code, `code ${code}: ${urls.at(-1)}`);
    }
  });

  test('good sessions, with and without ads', async () => {
    assert.equal((await get(goodSession(viewer(100), false))).status, 200);
    const withAd = goodSession(viewer(101), true);
    assert.match(withAd, new RegExp(`ad=${SIM.adReady}`));
    assert.equal((await get(withAd)).status, 200);
  });
});
