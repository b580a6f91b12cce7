import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../../../test/helpers/test-app.js';
import { PlaylineApiError } from '../../client/index.js';

const fails = (status: number, code: string) => (err: unknown) =>
  err instanceof PlaylineApiError && err.status === status && err.code === code;

describe('playback catalogue API', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  test('application keys: the secret is shown once, versions are added and revoked', async () => {
    const created = await t.client.playback.createAppKey('tv-app');
    assert.equal(created['@id'], '/api/v4/playback/app-keys/tv-app');
    assert.equal(created['@type'], 'PlaybackAppKey');
    assert.equal(created.created_version, 1);
    assert.match(created.secret ?? '', /^[A-Za-z0-9_-]{40}$/);
    const v2 = await t.client.playback.addAppKeyVersion('tv-app');
    assert.equal(v2.created_version, 2);
    const revoked = await t.client.playback.revokeAppKeyVersion('tv-app', 1);
    assert.ok(revoked.versions[0]?.revoked_at !== null && revoked.versions[1]?.revoked_at === null);
    const listed = await t.client.playback.listAppKeys();
    assert.equal(listed.total_items, 1);
    assert.equal(listed.items[0]?.secret, undefined, 'listings never show secrets');
    assert.equal((await t.client.playback.getAppKey('tv-app')).versions.length, 2);
    assert.equal((await t.client.playback.deleteAppKey('tv-app')).message, 'Deleted');
  });

  test('application keys: errors (duplicate, unknown, bad name)', async () => {
    await t.client.playback.createAppKey('dup');
    await assert.rejects(t.client.playback.createAppKey('dup'), fails(409, 'conflict'));
    await assert.rejects(t.client.playback.addAppKeyVersion('nope'), fails(404, 'not_found'));
    await assert.rejects(t.client.playback.revokeAppKeyVersion('dup', 9), fails(404, 'not_found'));
    await assert.rejects(t.client.playback.createAppKey('has space'), fails(400, 'validation_failed'));
  });

  test('ad configurations: saved incomplete, then ready', async () => {
    const draft = await t.client.playback.putAdConfig('midroll', {});
    assert.equal(draft.ready, false);
    assert.deepEqual(draft.problems, ['no ad_server_url is set', 'no ad assets are named']);
    assert.equal(draft.timeout_ms, 2000);
    const ready = await t.client.playback.putAdConfig('midroll', { ad_server_url: 'https://ads.example.com/vast', ad_asset_ids: ['ad-30s'], simulated_latency_ms: 40, timeout_ms: 500 });
    assert.equal(ready.ready, true);
    assert.deepEqual((await t.client.playback.getAdConfig('midroll')).ad_asset_ids, ['ad-30s']);
    assert.equal((await t.client.playback.listAdConfigs()).total_items, 1);
    await assert.rejects(t.client.playback.putAdConfig('midroll', { timeout_ms: 0 }), fails(400, 'validation_failed'));
    await assert.rejects(t.client.playback.putAdConfig('midroll', { ad_server_url: 'ftp://x' }), fails(400, 'validation_failed'));
    await assert.rejects(t.client.playback.putAdConfig('midroll', { ad_asset_ids: ['../other-workspace'] }), fails(400, 'validation_failed'));
    assert.equal((await t.client.playback.deleteAdConfig('midroll')).message, 'Deleted');
    await assert.rejects(t.client.playback.getAdConfig('midroll'), fails(404, 'not_found'));
  });

  test('DRM policies: saved with the provider\'s verdict', async () => {
    const ok = await t.client.playback.putDrmPolicy('fp', { provider: 'fairplay', settings: { hdcp: 'type0', license_duration_s: 3600 } });
    assert.deepEqual([ok.provider_accepts, ok.provider_problems], [true, []]);
    const rejected = await t.client.playback.putDrmPolicy('fp', { provider: 'fairplay', settings: { security_level: 1 } });
    assert.equal(rejected.provider_accepts, false);
    assert.deepEqual(rejected.provider_problems, ['fairplay does not support security_level', 'fairplay security_level must be one of 150, 2000, 3000']);
    await assert.rejects(t.client.playback.putDrmPolicy('x', { provider: 'clearkey' as 'widevine' }), fails(400, 'validation_failed'));
    assert.equal((await t.client.playback.listDrmPolicies()).items.length, 1);
    await t.client.playback.deleteDrmPolicy('fp');
  });

  test('private assets: listed with whom they are shared', async () => {
    const asset = await t.client.playback.putPrivateAsset('film-1', [t.other.workspace.id]);
    assert.equal(asset['@id'], '/api/v4/playback/private-assets/film-1');
    assert.deepEqual(asset.shared_with, [t.other.workspace.id]);
    assert.equal((await t.client.playback.listPrivateAssets()).total_items, 1);
    assert.equal((await t.client.playback.deletePrivateAsset('film-1')).message, 'Deleted');
    await assert.rejects(t.client.playback.getPrivateAsset('film-1'), fails(404, 'not_found'));
  });

  test('security: unsigned calls are 401, another workspace\'s resources are 404', async () => {
    const unsigned = await t.app.inject({ method: 'GET', url: '/api/v4/playback/app-keys' });
    assert.equal(unsigned.statusCode, 401);
    await t.client.playback.putAdConfig('mine', {});
    await t.client.playback.createAppKey('mine');
    await assert.rejects(t.other.client.playback.getAdConfig('mine'), fails(404, 'not_found'));
    await assert.rejects(t.other.client.playback.deleteAdConfig('mine'), fails(404, 'not_found'));
    await assert.rejects(t.other.client.playback.addAppKeyVersion('mine'), fails(404, 'not_found'));
    assert.equal((await t.other.client.playback.listAppKeys()).total_items, 0);
    const ingest = await t.newKey(t.workspace.id, 'ingest');
    await assert.rejects(t.clientFor(t.workspace.id, ingest.secret).playback.listAdConfigs(), fails(403, 'key_kind_not_allowed'));
  });
});
