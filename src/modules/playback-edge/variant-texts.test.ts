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
