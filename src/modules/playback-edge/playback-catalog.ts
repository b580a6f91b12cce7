import type { DrmProviderName } from './drm-provider.js';

/** One version of an application key (never with its secret, except right after creation). */
export interface AppKeyVersion {
  version: number;
  prefix: string;
  createdAt: number;
  revokedAt: number | null;
}

/** A named application key and its versions, oldest first. */
export interface AppKey {
  owner: string;
  name: string;
  versions: AppKeyVersion[];
}

/** A key version as created: the only time its secret is shown. */
export interface CreatedAppKey extends AppKey {
  created: AppKeyVersion & { secret: string };
}

export interface AdConfig {
  owner: string;
  name: string;
  adServerUrl: string | null;
  /** Ad assets of the workspace's library the ad decision returns, played before the content in this order. */
  adAssetIds: string[];
  simulatedLatencyMs: number;
  timeoutMs: number;
  createdAt: number;
  updatedAt: number;
}

export interface AdConfigInput {
  adServerUrl: string | null;
  adAssetIds: string[];
  simulatedLatencyMs: number;
  timeoutMs: number;
}

export interface DrmPolicy {
  owner: string;
  name: string;
  provider: DrmProviderName;
  settings: Record<string, unknown>;
  createdAt: number;
  updatedAt: number;
}

export interface PrivateAsset {
  owner: string;
  assetId: string;
  /** Workspaces that may play the asset with their own signed URLs. */
  sharedWith: string[];
  createdAt: number;
  updatedAt: number;
}

/** Workspace `owner` lets workspace `granteeId` play its content (assets and live events) with `coid`. */
export interface ContentShare {
  owner: string;
  granteeId: string;
  createdAt: number;
}

/** Why an ad configuration cannot serve ads yet (empty: it is set up). */
export function adConfigProblems(config: Pick<AdConfig, 'adServerUrl' | 'adAssetIds'>): string[] {
  const problems: string[] = [];
  if (config.adServerUrl === null) problems.push('no ad_server_url is set');
  if (config.adAssetIds.length === 0) problems.push('no ad assets are named');
  return problems;
}

/** An application key version with its secret opened, for signature checks. */
export interface AppKeySecret {
  version: number;
  secret: Buffer;
  revoked: boolean;
}

/**
 * What the edge looks up while checking a URL. Answers may be up to a second old (changes by
 * another process or instance show within that time; local changes at once).
 */
export interface PlaybackDirectory {
  /** The owner's active API key secrets; null when there is no such workspace. */
  signingKeys(owner: string): Promise<Buffer[] | null>;
  /** The versions of the named application key; empty when there is no such name. */
  appKey(owner: string, name: string): Promise<AppKeySecret[]>;
  adConfig(owner: string, name: string): Promise<AdConfig | undefined>;
  drmPolicy(owner: string, name: string): Promise<DrmPolicy | undefined>;
  privateAsset(owner: string, assetId: string): Promise<PrivateAsset | undefined>;
  /** Whether `owner` shares its content with workspace `granteeId` (a workspace-level share). */
  sharesWith(owner: string, granteeId: string): Promise<boolean>;
}

/**
 * Whether workspace `player` may play `contentId` of workspace `contentOwner` with its own signed
 * URLs (`coid`). Content is private to its workspace by default: a private-asset entry for the
 * content decides alone (the workspaces it lists), else the owner's workspace-level share.
 */
export async function mayPlayAcross(directory: Pick<PlaybackDirectory, 'privateAsset' | 'sharesWith'>, contentOwner: string, player: string, contentId: string): Promise<boolean> {
  if (contentOwner === player) return true;
  const entry = await directory.privateAsset(contentOwner, contentId);
  if (entry) return entry.sharedWith.includes(player);
  return directory.sharesWith(contentOwner, player);
}
