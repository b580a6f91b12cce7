import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { clusterPair, clusterPairProblem, type ClusterPair } from '../../../test/helpers/cluster-pair.js';
import { createTestApp, type TestApp } from '../../../test/helpers/test-app.js';
import { placeFakeAssets } from './testing/edge-test-kit.js';

const play = async (t: TestApp, url: string) => {
  const response = await t.app.inject({ method: 'GET', url });
  return { status: response.statusCode, code: response.headers['x-playback-error-code'] ?? null };
};

describe('single-use values in the embedded mode are bounded per workspace', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ env: { PLAYLINE_PLAYBACK_SINGLE_USE_CAPACITY: '3' } });
    await placeFakeAssets(t, t.workspace.id, ['movie-a', ...Array.from({ length: 10 }, (_, i) => `movie-${i}`)]);
    await placeFakeAssets(t, t.other.workspace.id, ['movie-b']);
    await t.client.playback.putDrmPolicy('wv', { provider: 'widevine', settings: { security_level: 1 } });
    await t.other.client.playback.putDrmPolicy('wv', { provider: 'widevine', settings: { security_level: 1 } });
  });
  after(() => t.close());

  test("a workspace using more pbs values than its share cannot make another workspace's used pbs play again", async () => {
    const theirs = t.other.client.playback.url('movie-b', { params: [['pbs', 'other-session-1']] });
    assert.deepEqual(await play(t, theirs), { status: 200, code: null });
    for (let i = 0; i < 10; i++) {
      assert.equal((await play(t, t.client.playback.url('movie-a', { params: [['pbs', `flood-session-${i}`]] }))).status, 200);
    }
    assert.deepEqual(await play(t, theirs), { status: 409, code: '127' });
    // The flooding workspace forgot its own oldest values: the share is the setting (3).
    assert.equal((await play(t, t.client.playback.url('movie-a', { params: [['pbs', 'flood-session-0']] }))).status, 200);
    assert.deepEqual(await play(t, t.client.playback.url('movie-a', { params: [['pbs', 'flood-session-9']] })), { status: 409, code: '127' });
  });

  test("the same holds for DRM URL signatures (112)", async () => {
    const theirs = t.other.client.playback.url('movie-b', { params: [['drm', 'wv']] });
    assert.equal((await play(t, theirs)).status, 200);
    for (let i = 0; i < 10; i++) assert.equal((await play(t, t.client.playback.url(`movie-${i}`, { params: [['drm', 'wv']] }))).status, 200);
    assert.deepEqual(await play(t, theirs), { status: 403, code: '112' });
  });
});

const clusterProblem = await clusterPairProblem();

describe('single-use values in cluster mode are shared by every instance (Redis)', { skip: clusterProblem }, () => {
  let pair: ClusterPair;
  let a: TestApp;
  let b: TestApp;
  before(async () => {
    pair = await clusterPair();
    ({ a, b } = pair);
    // One media directory for the deployment (both instances read it): the workspace of `a` plays.
    await placeFakeAssets(a, a.workspace.id, ['movie-1', 'movie-2']);
    await a.client.playback.putDrmPolicy('wv', { provider: 'widevine', settings: { security_level: 1 } });
  });
  after(() => pair?.close());

  test('a pbs played on one instance is refused on the other (127)', async () => {
    assert.ok(a.runtime.cluster && b.runtime.cluster, 'both instances run in cluster mode');
    const url = a.client.playback.url('movie-1', { params: [['pbs', 'cluster-session-1']] });
    assert.deepEqual(await play(a, url), { status: 200, code: null });
    assert.deepEqual(await play(b, url), { status: 409, code: '127' });
    assert.deepEqual(await play(a, url), { status: 409, code: '127' });
  });

  test('a DRM URL played on one instance is refused on the other (112)', async () => {
    const url = a.client.playback.url('movie-2', { params: [['drm', 'wv']] });
    assert.deepEqual(await play(b, url), { status: 200, code: null });
    assert.deepEqual(await play(a, url), { status: 403, code: '112' });
  });
});
