import { mediaRootOf } from '../../platform/media/media-root.js';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../../../test/helpers/test-app.js';
import type { PlaybackErrorReport } from '../../platform/error-report-sink.js';
import type { PlaybackClient } from './testing/content-share-kit.js';
import { MemoryLiveLibrary, playbackOf } from './testing/content-share-kit.js';
import { testEdge, type TestEdge } from './testing/edge-test-kit.js';
import { writeFakeAsset } from './testing/media-fixtures.js';

/**
 * N9 (security review 2026-11-27): content is private to its workspace. Another workspace's
 * signed URL naming it in `coid` plays only when the owner shared its content with that
 * workspace (a private-asset entry decides alone for its asset); otherwise 102, reported to
 * the workspace whose URL it was.
 */
describe('content is private to its workspace: cross-workspace playback (coid) needs a share', () => {
  let t: TestApp;
  let edge: TestEdge;
  let third: { id: string; client: PlaybackClient };
  const reports: PlaybackErrorReport[] = [];
  const live = new MemoryLiveLibrary();
  let me: string;
  let owner: string;
  const play = (client: PlaybackClient, id: string, o: { kind?: 'asset' | 'event'; coid?: string } = {}) => playbackOf(t, client, id, o);

  before(async () => {
    edge = testEdge();
    t = await createTestApp({ overrides: { playbackEdge: { ...edge.overrides, live }, errorReports: () => ({ submit: (r) => void reports.push(r) }) } });
    me = t.workspace.id;
    owner = t.other.workspace.id;
    const root = mediaRootOf(t.runtime.config);
    for (const id of ['their-film', 'their-premiere']) await writeFakeAsset(root, owner, id);
    live.put(owner, 'their-live');
    const workspace = await t.runtime.workspaces.createWorkspace('Third workspace');
    const key = await t.newKey(workspace.id);
    third = { id: workspace.id, client: t.clientFor(workspace.id, key.secret) };
  });
  after(() => t.close());

  test('an unshared asset of another workspace answers 102 to a URL naming it in coid; its own owner still plays it', async () => {
    const before = edge.events.length;
    const refused = await play(t.client, 'their-film', { coid: owner });
    assert.deepEqual([refused.status, refused.code], [403, '102']);
    assert.match(refused.detail, /has not shared this content with this workspace/);
    assert.deepEqual((await play(t.other.client, 'their-film')).status, 200, 'the owner plays its own asset');
    assert.deepEqual((await play(t.other.client, 'their-film', { coid: owner })).status, 200, 'coid naming oneself is no cross-workspace play');

    const error = edge.events.slice(before).find((e) => e.type === 'error');
    assert.ok(error, 'the refusal emits an error event');
    assert.deepEqual(
      [error.owner, error.asset_id, error.error_code, error.http_status, error.workspace_only],
      [me, 'their-film', 102, 403, true],
      'for the workspace whose URL it was, counted for the workspace only (its statistics do not tell whether the other library holds the asset)',
    );
  });

  test('an unshared live event of another workspace answers 102 too', async () => {
    const refused = await play(t.client, 'their-live', { kind: 'event', coid: owner });
    assert.deepEqual([refused.status, refused.code], [403, '102']);
    assert.equal((await play(t.other.client, 'their-live', { kind: 'event' })).status, 200, 'its owner plays it');
  });

  test('the refusal is reported to the workspace whose URL it was, and counted in its statistics', async () => {
    await t.runtime.playbackEdge.events.flush();
    reports.length = 0;
    const refused = await play(t.client, 'their-premiere', { coid: owner });
    assert.equal(refused.code, '102');
    await t.runtime.playbackEdge.events.flush();
    assert.deepEqual(
      reports.map((r) => [r.owner, r.code, r.errorCode, r.msg]),
      [[me, 403, 102, 'the content owner (coid) has not shared this content with this workspace']],
      'one report, to the signing workspace; none to the content owner',
    );
    assert.ok(reports[0]?.url.includes('coid='), reports[0]?.url);
    const summary = await t.client.vodStats.summary();
    assert.ok((summary.stats.errors['102'] ?? 0) >= 1, JSON.stringify(summary.stats.errors));
  });

  test('shared: the asset and the live event play for that workspace only; the share removed: 102 again', async () => {
    const created = await t.other.client.workspace.share(me);
    assert.deepEqual(created, { '@id': `/api/v4/workspace/shares/${me}`, '@type': 'ContentShare', workspace_id: owner, grantee_id: me, created_at: t.clock.now() });

    const film = await play(t.client, 'their-film', { coid: owner });
    assert.equal(film.status, 200, film.detail);
    assert.match(film.body, /^#EXTM3U/);
    assert.equal((await play(t.client, 'their-live', { kind: 'event', coid: owner })).status, 200);
    assert.equal((await play(third.client, 'their-film', { coid: owner })).code, '102', 'a workspace it was not shared with');
    assert.equal((await play(third.client, 'their-live', { kind: 'event', coid: owner })).code, '102');
    assert.equal((await play(t.other.client, 'their-film', { coid: me })).code, '102', 'a share is one way');

    await t.other.client.workspace.unshare(me);
    assert.equal((await play(t.client, 'their-film', { coid: owner })).code, '102', 'refused at once after the share is removed');
    assert.equal((await play(t.client, 'their-live', { kind: 'event', coid: owner })).code, '102');
  });

  test('a private-asset entry decides for its asset, with or without a workspace-level share', async () => {
    await t.other.client.workspace.share(me);
    await t.other.client.playback.putPrivateAsset('their-premiere', []);
    assert.equal((await play(t.client, 'their-premiere', { coid: owner })).code, '102', 'private to no one despite the share');
    assert.equal((await play(t.client, 'their-film', { coid: owner })).status, 200, 'the share still covers the owner\'s other assets');

    await t.other.client.playback.putPrivateAsset('their-premiere', [third.id]);
    assert.equal((await play(third.client, 'their-premiere', { coid: owner })).status, 200, 'the entry lists it: plays without a workspace share');
    assert.equal((await play(third.client, 'their-film', { coid: owner })).code, '102', 'the entry covers its asset only');
    assert.equal((await play(t.client, 'their-premiere', { coid: owner })).code, '102');

    await t.other.client.playback.deletePrivateAsset('their-premiere');
    assert.equal((await play(t.client, 'their-premiere', { coid: owner })).status, 200, 'without the entry, the share decides');
    assert.equal((await play(third.client, 'their-premiere', { coid: owner })).code, '102');
    await t.other.client.workspace.unshare(me);
  });
});

describe('/api/v4/workspace/shares: a workspace manages its own shares', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());
  const call = (client: TestApp['client'], method: 'GET' | 'PUT' | 'DELETE', grantee?: string) =>
    client.core.send(method, `/api/v4/workspace/shares${grantee === undefined ? '' : `/${encodeURIComponent(grantee)}`}`);
  const json = (r: { body: unknown }) => (typeof r.body === 'string' ? JSON.parse(r.body) : r.body) as Record<string, unknown>;

  test('PUT shares (201, then 200), GET lists and reads one, DELETE stops sharing (then 404)', async () => {
    const me = t.workspace.id;
    const them = t.other.workspace.id;
    const view = { '@id': `/api/v4/workspace/shares/${them}`, '@type': 'ContentShare', workspace_id: me, grantee_id: them, created_at: t.clock.now() };
    const created = await call(t.client, 'PUT', them);
    assert.deepEqual([created.status, json(created)], [201, view]);
    const again = await call(t.client, 'PUT', them);
    assert.deepEqual([again.status, json(again)], [200, view]);
    assert.deepEqual(json(await call(t.client, 'GET')), { '@id': '/api/v4/workspace/shares', '@type': 'Collection', items: [view], total_items: 1 });
    assert.deepEqual(json(await call(t.client, 'GET', them)), view);
    assert.deepEqual(await t.client.workspace.shares(), [view], 'the SDK reads the same');
    const deleted = await call(t.client, 'DELETE', them);
    assert.deepEqual([deleted.status, json(deleted)], [200, { '@id': view['@id'], '@type': 'ContentShare', message: 'Deleted' }]);
    assert.equal((await call(t.client, 'DELETE', them)).status, 404);
    assert.equal((await call(t.client, 'GET', them)).status, 404);
    assert.deepEqual(await t.client.workspace.shares(), []);
  });

  test('sharing with oneself is 422, with an unknown workspace 404, a malformed id 400', async () => {
    const self = await call(t.client, 'PUT', t.workspace.id);
    assert.deepEqual([self.status, json(self).code], [422, 'unprocessable']);
    assert.match(String(json(self).detail), /always plays its own content/);
    const unknown = await call(t.client, 'PUT', 'f'.repeat(32));
    assert.deepEqual([unknown.status, json(unknown).code], [404, 'not_found']);
    assert.match(String(json(unknown).detail), /Workspace f{32} does not exist/);
    for (const bad of ['a b', 'x'.repeat(65), 'a.b']) {
      const r = await call(t.client, 'PUT', bad);
      assert.deepEqual([r.status, json(r).code], [400, 'validation_failed'], bad);
    }
    assert.deepEqual(await t.client.workspace.shares(), [], 'nothing was saved');
  });

  test('owner-only: a workspace sees and removes only the shares it gave', async () => {
    const third = await t.runtime.workspaces.createWorkspace('Third');
    await t.other.client.workspace.share(third.id);
    assert.deepEqual(await t.client.workspace.shares(), [], "another workspace's shares are not listed");
    assert.equal((await call(t.client, 'GET', third.id)).status, 404);
    assert.equal((await call(t.client, 'DELETE', third.id)).status, 404);
    assert.deepEqual((await t.other.client.workspace.shares()).map((s) => s.grantee_id), [third.id], 'the owner\'s share is untouched');
  });
});
