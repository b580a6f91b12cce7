import type { AssetCollectionView, AssetDeletedView, AssetView } from './assets.schema.js';
import type { AssetRecord } from './asset-store.js';

export const ASSETS_PATH = '/api/v4/assets';

const seconds = (ms: number) => Math.floor(ms / 1000);

export const assetView = (asset: AssetRecord): AssetView => ({
  '@id': `${ASSETS_PATH}/${asset.id}`,
  '@type': 'Asset',
  id: asset.id,
  title: asset.title,
  state: asset.state,
  progress: asset.progress,
  duration_s: asset.durationMs === null ? null : asset.durationMs / 1000,
  renditions: asset.renditions,
  poster: asset.state === 'ready' ? `${ASSETS_PATH}/${asset.id}/poster.jpg` : null,
  failure_reason: asset.state === 'failed' ? asset.failureReason : null,
  size_bytes: asset.sizeBytes,
  source_slicer_id: asset.recording?.slicerId ?? null,
  recording_started_at: asset.recording ? seconds(asset.recording.startedAt) : null,
  recording_ended_at: asset.recording ? seconds(asset.recording.endedAt) : null,
  created_at: seconds(asset.createdAt),
  updated_at: seconds(asset.updatedAt),
});

export const assetCollectionView = (selfPath: string, assets: AssetRecord[], total: number): AssetCollectionView => ({
  '@id': selfPath,
  '@type': 'Collection',
  items: assets.map(assetView),
  total_items: total,
});

export const assetDeletedView = (assetId: string): AssetDeletedView => ({
  '@id': `${ASSETS_PATH}/${assetId}`,
  '@type': 'Asset',
  id: assetId,
  message: 'Deleted',
});
