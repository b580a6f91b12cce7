import type { DrmProvider } from './drm-provider.js';
import { adConfigProblems, type AdConfig, type AppKey, type CreatedAppKey, type DrmPolicy, type PrivateAsset } from './playback-catalog.js';
import type { AdConfigView, AppKeyView, DeletedView, DrmPolicyView, PrivateAssetView } from './playback-edge.schema.js';

const BASE = '/api/v4/playback';
const seg = encodeURIComponent;

export const appKeyView = (key: AppKey | CreatedAppKey): AppKeyView => ({
  '@id': `${BASE}/app-keys/${seg(key.name)}`,
  '@type': 'PlaybackAppKey',
  name: key.name,
  owner: key.owner,
  versions: key.versions.map((v) => ({ version: v.version, prefix: v.prefix, created_at: v.createdAt, revoked_at: v.revokedAt })),
  ...('created' in key ? { created_version: key.created.version, secret: key.created.secret } : {}),
});

export const adConfigView = (config: AdConfig): AdConfigView => {
  const problems = adConfigProblems(config);
  return {
    '@id': `${BASE}/ad-configs/${seg(config.name)}`,
    '@type': 'PlaybackAdConfig',
    name: config.name,
    ad_server_url: config.adServerUrl,
    ad_asset_ids: config.adAssetIds,
    simulated_latency_ms: config.simulatedLatencyMs,
    timeout_ms: config.timeoutMs,
    ready: problems.length === 0,
    problems,
    created_at: config.createdAt,
    updated_at: config.updatedAt,
  };
};

export const drmPolicyView = (policy: DrmPolicy, provider: DrmProvider): DrmPolicyView => {
  const problems = provider.check(policy);
  return {
    '@id': `${BASE}/drm-policies/${seg(policy.name)}`,
    '@type': 'PlaybackDrmPolicy',
    name: policy.name,
    provider: policy.provider,
    settings: policy.settings,
    provider_accepts: problems.length === 0,
    provider_problems: problems,
    created_at: policy.createdAt,
    updated_at: policy.updatedAt,
  };
};

export const privateAssetView = (asset: PrivateAsset): PrivateAssetView => ({
  '@id': `${BASE}/private-assets/${seg(asset.assetId)}`,
  '@type': 'PlaybackPrivateAsset',
  asset_id: asset.assetId,
  shared_with: asset.sharedWith,
  created_at: asset.createdAt,
  updated_at: asset.updatedAt,
});

export const deletedView = (id: string, type: string): DeletedView => ({ '@id': id, '@type': type, message: 'Deleted' });

export const collection = <T>(path: string, items: T[]) => ({ '@id': `${BASE}/${path}`, '@type': 'Collection' as const, items, total_items: items.length });
