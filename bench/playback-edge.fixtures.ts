import { assetDurationS, planAsset, renderPlaylist } from '../src/modules/playback-edge/hls-playlist.js';
import { PlaybackFailure } from '../src/modules/playback-edge/playback-failure.js';

/** The exact playlist text the edge answers for a plain URL of this asset (the bare baseline's body). */
export function bareEdgePlaylist(assetId: string): string {
  const plan = planAsset(assetDurationS(assetId), {});
  if (plan instanceof PlaybackFailure) throw new Error(plan.message);
  return renderPlaylist(plan, `/segments/${encodeURIComponent(assetId)}`);
}
