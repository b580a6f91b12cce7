import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../../../test/helpers/test-app.js';
import { mediaRootOf } from '../../platform/media/media-root.js';
import { MemoryLiveLibrary, playbackOf, sessionVariantOf } from './testing/content-share-kit.js';
import { testEdge } from './testing/edge-test-kit.js';
import { writeFakeAsset } from './testing/media-fixtures.js';

/**
 * Issue 35: "a removed share does not end the grantee's sessions, and the grantee picks the
 * expiry". A signed URL may not live longer than PLAYLINE_PLAYBACK_MAX_LIFETIME_S (101), and a
 * session opened under a share is asked about the share on every request, so removing it ends the
 * session at once, the live event's included (also the owner's next event on the same slicer).
 */
describe('signed URL lifetime and sessions under a share', () => {
  let t: TestApp;
  const live = new MemoryLiveLibrary();
  let me: string;
  let owner: string;

  before(async () => {
    const edge = testEdge();
    t = await createTestApp({ overrides: { playbackEdge: { ...edge.overrides, live } } });
    me = t.workspace.id;
    owner = t.other.workspace.id;
    await writeFakeAsset(mediaRootOf(t.runtime.config), owner, 'their-film');
    live.put(owner, 'their-slicer');
  });
  after(() => t.close());

  const session = async (path: string) => {
    const r = await t.app.inject({ method: 'GET', url: path });
    const code = r.headers['x-playback-error-code'];
    return { status: r.statusCode, code: code === undefined ? undefined : String(code) };
  };

  test('an exp further ahead than the longest lifetime is refused with 101, for its own and for shared content', async () => {
    const max = t.runtime.config.playbackMaxLifetimeS;
    const tenYears = 10 * 365 * 86400;
    const own = await playbackOf(t, t.other.client, 'their-film', { ttlS: tenYears });
    assert.deepEqual([own.status, own.code], [400, '101'], own.detail);
    assert.match(own.detail, /PLAYLINE_PLAYBACK_MAX_LIFETIME_S/);
    assert.equal((await playbackOf(t, t.other.client, 'their-film', { ttlS: max + 120 })).code, '101', 'just past the bound');
    assert.equal((await playbackOf(t, t.other.client, 'their-film', { ttlS: max - 120 })).status, 200, 'within the bound it plays');
    assert.equal((await playbackOf(t, t.other.client, 'their-slicer', { kind: 'event', ttlS: tenYears })).code, '101', 'a live event too');
    await t.other.client.workspace.share(me);
    try {
      assert.equal((await playbackOf(t, t.client, 'their-film', { coid: owner, ttlS: tenYears })).code, '101', 'the grantee cannot pick a longer life');
    } finally {
      await t.other.client.workspace.unshare(me);
    }
  });

  test('a share removed ends the grantee\'s open sessions of an asset and of a live event, and of the owner\'s next live event', async () => {
    await t.other.client.workspace.share(me);
    const film = await playbackOf(t, t.client, 'their-film', { coid: owner });
    assert.equal(film.status, 200, film.detail);
    const event = await playbackOf(t, t.client, 'their-slicer', { kind: 'event', coid: owner });
    assert.equal(event.status, 200, event.detail);
    const filmVariant = sessionVariantOf(film.body);
    const eventVariant = sessionVariantOf(event.body);
    assert.equal((await session(filmVariant)).status, 200, 'the session plays while shared');
    assert.equal((await session(eventVariant)).status, 200);
    const ownSession = sessionVariantOf((await playbackOf(t, t.other.client, 'their-film')).body);

    await t.other.client.workspace.unshare(me);
    assert.deepEqual(await session(filmVariant), { status: 403, code: '102' }, 'the asset session ends with the share');
    assert.deepEqual(await session(eventVariant), { status: 403, code: '102' }, 'the live session ends with the share');
    live.put(owner, 'their-slicer'); // the owner's next live event on the same slicer
    assert.deepEqual(await session(eventVariant), { status: 403, code: '102' }, 'nor does it play the owner\'s next event');
    assert.equal((await session(ownSession)).status, 200, 'the owner\'s own session is not touched');

    await t.other.client.workspace.share(me);
    assert.equal((await session(filmVariant)).status, 200, 'shared again, the session answers again (its own exp still bounds it)');
    await t.other.client.workspace.unshare(me);
  });
});
