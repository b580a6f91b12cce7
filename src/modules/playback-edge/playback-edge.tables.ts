/** A version of a named application key (`kid`/`kv` in playback URLs). Times are Unix ms. */
export interface PlaybackAppKeyTable {
  id: string;
  workspace_id: string;
  name: string;
  version: number;
  /** First characters of the secret, to recognise it in listings. */
  prefix: string;
  secret_sealed: string;
  created_at: number;
  revoked_at: number | null;
}

/** An ad configuration (`ad=<name>`); the ad decision server is simulated and returns the named ad assets. */
export interface PlaybackAdConfigTable {
  workspace_id: string;
  name: string;
  /** Null while the configuration is not set up (playback answers 122). */
  ad_server_url: string | null;
  /** JSON array of ad asset ids (the workspace's library), in play order; empty while not set up. */
  ad_asset_ids: string;
  simulated_latency_ms: number;
  timeout_ms: number;
  created_at: number;
  updated_at: number;
}

/** A DRM policy (`drm=<name>`): provider and provider-specific settings (JSON). */
export interface PlaybackDrmPolicyTable {
  workspace_id: string;
  name: string;
  provider: string;
  settings: string;
  created_at: number;
  updated_at: number;
}

/** An asset its owner keeps private: other workspaces may play it only when listed in `shared_with` (JSON array). */
export interface PlaybackPrivateAssetTable {
  workspace_id: string;
  asset_id: string;
  shared_with: string;
  created_at: number;
  updated_at: number;
}

/**
 * A workspace-level share: workspace `workspace_id` lets workspace `grantee_id` play its content
 * (assets and live events) with the grantee's own signed URLs (`coid=<workspace_id>`). Without
 * one, content is private to its workspace; a private-asset entry overrides it for its asset.
 */
export interface PlaybackShareTable {
  workspace_id: string;
  grantee_id: string;
  created_at: number;
}

export interface PlaybackEdgeTables {
  playback_app_keys: PlaybackAppKeyTable;
  playback_ad_configs: PlaybackAdConfigTable;
  playback_drm_policies: PlaybackDrmPolicyTable;
  playback_private_assets: PlaybackPrivateAssetTable;
  playback_shares: PlaybackShareTable;
}

// The module adds its tables to the database's type itself, so platform/db names no module.
declare module '../../platform/db/schema.js' {
  interface Database extends PlaybackEdgeTables {}
}
