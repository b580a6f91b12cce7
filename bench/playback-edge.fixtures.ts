import { randomBytes } from 'node:crypto';
import { toPackagedAsset } from '../src/modules/playback-edge/media-library.js';
import { multivariantOf } from '../src/modules/playback-edge/session-media.js';
import { SessionTokens, type SessionGrant } from '../src/modules/playback-edge/session-token.js';
import { manifestOf } from '../src/modules/playback-edge/testing/memory-media-library.js';

/** The media the playback-edge benchmark plays: the fake layout's two renditions of 4, 4, 2 s. */
export const BENCH_DURATIONS = [4, 4, 2];

/**
 * A multivariant playlist of the size the edge answers for the benchmark's asset (same
 * renditions, a session token of the same length): the bare baseline's body.
 */
export function bareEdgePlaylist(assetId: string): string {
  const owner = 'b'.repeat(32);
  const grant: SessionGrant = { owner, library: owner, assetId, session: '00000000-0000-4000-8000-000000000000', requestedAt: Date.now(), expiresAt: Math.floor(Date.now() / 1000) + 3600, plan: {} };
  const asset = toPackagedAsset(owner, assetId, '/', manifestOf(BENCH_DURATIONS));
  return multivariantOf(new SessionTokens(randomBytes(32)).sign(grant), grant, asset, []);
}
