import { toPackagedAsset, type MediaLibrary, type PackagedAsset } from '../media-library.js';
import type { PackagedManifest } from '../../../platform/media/packaged-manifest.js';

/** A media library held in memory (unit tests of the services; no file is ever read). */
export class MemoryMediaLibrary implements MediaLibrary {
  private readonly assets = new Map<string, PackagedAsset>();
  lookups = 0;

  put(owner: string, assetId: string, manifest: PackagedManifest, dir = `/media/assets/${owner}/${assetId}`): PackagedAsset {
    const asset = toPackagedAsset(owner, assetId, dir, manifest);
    this.assets.set(`${owner}/${assetId}`, asset);
    return asset;
  }

  remove(owner: string, assetId: string): void {
    this.assets.delete(`${owner}/${assetId}`);
  }

  find(owner: string, assetId: string): Promise<PackagedAsset | undefined> {
    this.lookups += 1;
    return Promise.resolve(this.assets.get(`${owner}/${assetId}`));
  }
}

/** A manifest with these segment durations in each rendition (names and sizes as the fake layout's). */
export function manifestOf(durations: number[] = [4, 4, 2], renditions: Array<{ name: string; height: number; bandwidth: number }> = [{ name: '360p', height: 360, bandwidth: 900_000 }, { name: '180p', height: 180, bandwidth: 300_000 }]): PackagedManifest {
  return {
    version: 1,
    duration_s: durations.reduce((a, b) => a + b, 0),
    segment_s: Math.max(...durations),
    renditions: renditions.map((r) => ({
      name: r.name,
      width: Math.round((r.height * 16) / 9),
      height: r.height,
      bandwidth: r.bandwidth,
      average_bandwidth: Math.round(r.bandwidth * 0.8),
      codecs: 'avc1.64001f,mp4a.40.2',
      playlist: `${r.name}/playlist.m3u8`,
      init: `${r.name}/init.mp4`,
      segments: durations.map((d, i) => ({ uri: `${r.name}/seg_${String(i).padStart(5, '0')}.m4s`, duration_s: d, bytes: 188 })),
    })),
  };
}
