import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toPackagedAsset } from './media-library.js';
import { VariantTexts } from './playback-session.service.js';
import { variantOf } from './session-media.js';
import type { SessionGrant } from './session-token.js';
import { manifestOf } from './testing/memory-media-library.js';

const grant = (plan: SessionGrant['plan']): SessionGrant => ({ owner: 'o', library: 'o', assetId: 'a', session: '00000000-0000-4000-8000-000000000000', requestedAt: 0, expiresAt: 1, plan });

test('variant playlists are rendered once per asset, rendition and segment plan, and afresh for a repackaged asset', () => {
  const texts = new VariantTexts();
  const asset = toPackagedAsset('o', 'a', '/m', manifestOf([4, 4, 2]));
  const rendition = asset.manifest.renditions[0];
  assert.ok(rendition);
  const plain = texts.of(grant({}), asset, rendition);
  assert.equal(plain, variantOf(grant({}), asset, rendition, []));
  assert.equal(texts.of(grant({}), asset, rendition), plain);
  const shorter = texts.of(grant({ durationS: 5 }), asset, rendition);
  assert.equal(shorter, variantOf(grant({ durationS: 5 }), asset, rendition, []));
  assert.notEqual(shorter, plain);
  // Repackaged: the library gives a new asset object, whose playlists are its own.
  const repackaged = toPackagedAsset('o', 'a', '/m', manifestOf([2, 2]));
  const again = texts.of(grant({}), repackaged, repackaged.manifest.renditions[0] as typeof rendition);
  assert.notEqual(again, plain);
  assert.equal(again, variantOf(grant({}), repackaged, repackaged.manifest.renditions[0] as typeof rendition, []));
});

test('a recording with an encoder reconnect: the content plays as two periods (EXT-X-DISCONTINUITY, the second period\'s EXT-X-MAP); a session starting in the second period names only its init', () => {
  const manifest = manifestOf([2, 2, 2, 2]);
  const [r] = manifest.renditions;
  assert.ok(r);
  r.segments[2] = { ...(r.segments[2] as (typeof r.segments)[number]), init: `${r.name}/init_1.mp4` };
  const asset = toPackagedAsset('o', 'a', '/m', manifest);
  assert.ok(asset.inits.has(`${r.name}/init_1.mp4`) && asset.files.has(`${r.name}/init_1.mp4`), 'the second init is a file of the asset, served as an init segment');
  const whole = variantOf(grant({}), asset, r, []) as string;
  assert.match(whole, /#EXT-X-MAP:URI="\.\.\/c\/360p\/init\.mp4"\n#EXTINF:2\.000,\n\.\.\/c\/360p\/seg_00000\.m4s\n#EXTINF:2\.000,\n\.\.\/c\/360p\/seg_00001\.m4s\n#EXT-X-DISCONTINUITY\n#EXT-X-MAP:URI="\.\.\/c\/360p\/init_1\.mp4"\n#EXTINF:2\.000,\n\.\.\/c\/360p\/seg_00002\.m4s/);
  assert.equal(whole.match(/#EXT-X-DISCONTINUITY/g)?.length, 1);
  const late = variantOf(grant({ startSegment: 2 }), asset, r, []) as string;
  assert.doesNotMatch(late, /init\.mp4|DISCONTINUITY/, `a session from the third segment plays the second period only: ${late}`);
  assert.match(late, /#EXT-X-MAP:URI="\.\.\/c\/360p\/init_1\.mp4"/);
});
