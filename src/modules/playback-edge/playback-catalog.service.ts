import { randomBytes } from 'node:crypto';
import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import { AppError } from '../../platform/errors.js';
import type { IdGenerator } from '../../platform/ids.js';
import type { SecretBox } from '../../platform/secret-box.js';
import type { DrmProviderName } from './drm-provider.js';
import type { AdConfig, AdConfigInput, AppKey, ContentShare, CreatedAppKey, DrmPolicy, PrivateAsset } from './playback-catalog.js';
import * as repo from './playback-edge.repository.js';

export interface PlaybackCatalogDeps {
  db: Db;
  box: SecretBox;
  clock: Clock;
  ids: IdGenerator;
  /** New application key secrets (default: 40 characters of URL-safe base64). */
  newSecret?: () => string;
  /** Told after every change, so cached lookups of this owner refresh at once. */
  onChange?: (owner: string) => void;
}

const toAppKeys = (owner: string, rows: repo.AppKeyRow[]): AppKey[] => {
  const byName = new Map<string, AppKey>();
  for (const row of rows) {
    const key = byName.get(row.name) ?? { owner, name: row.name, versions: [] };
    key.versions.push({ version: row.version, prefix: row.prefix, createdAt: row.created_at, revokedAt: row.revoked_at });
    byName.set(row.name, key);
  }
  return [...byName.values()];
};

export const toAdConfig = (row: repo.AdConfigRow): AdConfig => ({
  owner: row.workspace_id,
  name: row.name,
  adServerUrl: row.ad_server_url,
  adAssetIds: JSON.parse(row.ad_asset_ids) as string[],
  simulatedLatencyMs: row.simulated_latency_ms,
  timeoutMs: row.timeout_ms,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export const toDrmPolicy = (row: repo.DrmPolicyRow): DrmPolicy => ({
  owner: row.workspace_id,
  name: row.name,
  provider: row.provider as DrmProviderName,
  settings: JSON.parse(row.settings) as Record<string, unknown>,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export const toPrivateAsset = (row: repo.PrivateAssetRow): PrivateAsset => ({
  owner: row.workspace_id,
  assetId: row.asset_id,
  sharedWith: JSON.parse(row.shared_with) as string[],
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

const toShare = (row: repo.ShareRow): ContentShare => ({ owner: row.workspace_id, granteeId: row.grantee_id, createdAt: Number(row.created_at) });

/** SQLite and PostgreSQL both refuse a duplicate key with their own error code. */
const isUniqueViolation = (err: unknown): boolean => {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
};

/**
 * The playback configuration a workspace manages: application keys (versioned signing
 * secrets), ad configurations, DRM policies, private assets and the workspaces it shares its
 * content with. Everything is scoped by owner.
 */
export class PlaybackCatalogService {
  private readonly newSecret: () => string;
  private readonly changed: (owner: string) => void;

  constructor(private readonly deps: PlaybackCatalogDeps) {
    this.newSecret = deps.newSecret ?? (() => randomBytes(30).toString('base64url'));
    this.changed = deps.onChange ?? (() => undefined);
  }

  async listAppKeys(owner: string): Promise<AppKey[]> {
    return toAppKeys(owner, await repo.listAppKeyVersions(this.deps.db, owner));
  }

  async getAppKey(owner: string, name: string): Promise<AppKey> {
    const [key] = toAppKeys(owner, await repo.listAppKeyVersions(this.deps.db, owner, name));
    if (!key) throw new AppError('not_found', `Application key ${name} does not exist`);
    return key;
  }

  /** Creates version 1 of a new name. */
  async createAppKey(owner: string, name: string): Promise<CreatedAppKey> {
    if ((await repo.latestAppKeyVersion(this.deps.db, owner, name)) > 0) {
      throw new AppError('conflict', `Application key ${name} exists; add a version with POST .../${name}/versions`);
    }
    return this.addVersion(owner, name, 1);
  }

  /** Adds the next version; earlier versions keep signing until revoked. */
  async addAppKeyVersion(owner: string, name: string): Promise<CreatedAppKey> {
    const latest = await repo.latestAppKeyVersion(this.deps.db, owner, name);
    if (latest === 0) throw new AppError('not_found', `Application key ${name} does not exist`);
    return this.addVersion(owner, name, latest + 1);
  }

  async revokeAppKeyVersion(owner: string, name: string, version: number): Promise<AppKey> {
    const key = await this.getAppKey(owner, name);
    if (!key.versions.some((v) => v.version === version)) throw new AppError('not_found', `Application key ${name} has no version ${version}`);
    await repo.revokeAppKeyVersion(this.deps.db, owner, name, version, this.deps.clock.now());
    this.changed(owner);
    return this.getAppKey(owner, name);
  }

  async deleteAppKey(owner: string, name: string): Promise<void> {
    if ((await repo.deleteAppKey(this.deps.db, owner, name)) === 0) throw new AppError('not_found', `Application key ${name} does not exist`);
    this.changed(owner);
  }

  private async addVersion(owner: string, name: string, version: number): Promise<CreatedAppKey> {
    const secret = this.newSecret();
    const row: repo.AppKeyRow = {
      id: `pak_${this.deps.ids.hex()}`,
      workspace_id: owner,
      name,
      version,
      prefix: secret.slice(0, 6),
      secret_sealed: this.deps.box.seal(secret),
      created_at: this.deps.clock.now(),
      revoked_at: null,
    };
    try {
      await repo.insertAppKeyVersion(this.deps.db, row);
    } catch (err) {
      if (isUniqueViolation(err)) throw new AppError('conflict', `Application key ${name} changed meanwhile; retry`, { cause: err });
      throw err;
    }
    this.changed(owner);
    const key = await this.getAppKey(owner, name);
    return { ...key, created: { version, prefix: row.prefix, createdAt: row.created_at, revokedAt: null, secret } };
  }

  async listAdConfigs(owner: string): Promise<AdConfig[]> {
    return (await repo.listAdConfigs(this.deps.db, owner)).map(toAdConfig);
  }

  async getAdConfig(owner: string, name: string): Promise<AdConfig> {
    const row = await repo.findAdConfig(this.deps.db, owner, name);
    if (!row) throw new AppError('not_found', `Ad configuration ${name} does not exist`);
    return toAdConfig(row);
  }

  /** Saves an ad configuration, set up or not (playback with one that is not set up, or whose ad assets are not packaged, answers 122). */
  async putAdConfig(owner: string, name: string, input: AdConfigInput): Promise<AdConfig> {
    const now = this.deps.clock.now();
    await repo.upsertAdConfig(this.deps.db, {
      workspace_id: owner,
      name,
      ad_server_url: input.adServerUrl,
      ad_asset_ids: JSON.stringify(input.adAssetIds),
      simulated_latency_ms: input.simulatedLatencyMs,
      timeout_ms: input.timeoutMs,
      created_at: now,
      updated_at: now,
    });
    this.changed(owner);
    return this.getAdConfig(owner, name);
  }

  async deleteAdConfig(owner: string, name: string): Promise<void> {
    if ((await repo.deleteAdConfig(this.deps.db, owner, name)) === 0) throw new AppError('not_found', `Ad configuration ${name} does not exist`);
    this.changed(owner);
  }

  async listDrmPolicies(owner: string): Promise<DrmPolicy[]> {
    return (await repo.listDrmPolicies(this.deps.db, owner)).map(toDrmPolicy);
  }

  async getDrmPolicy(owner: string, name: string): Promise<DrmPolicy> {
    const row = await repo.findDrmPolicy(this.deps.db, owner, name);
    if (!row) throw new AppError('not_found', `DRM policy ${name} does not exist`);
    return toDrmPolicy(row);
  }

  /** Saves a DRM policy as given; the provider's verdict is shown, and applied at playback (114). */
  async putDrmPolicy(owner: string, name: string, provider: DrmProviderName, settings: Record<string, unknown>): Promise<DrmPolicy> {
    const now = this.deps.clock.now();
    await repo.upsertDrmPolicy(this.deps.db, { workspace_id: owner, name, provider, settings: JSON.stringify(settings), created_at: now, updated_at: now });
    this.changed(owner);
    return this.getDrmPolicy(owner, name);
  }

  async deleteDrmPolicy(owner: string, name: string): Promise<void> {
    if ((await repo.deleteDrmPolicy(this.deps.db, owner, name)) === 0) throw new AppError('not_found', `DRM policy ${name} does not exist`);
    this.changed(owner);
  }

  async listPrivateAssets(owner: string): Promise<PrivateAsset[]> {
    return (await repo.listPrivateAssets(this.deps.db, owner)).map(toPrivateAsset);
  }

  async getPrivateAsset(owner: string, assetId: string): Promise<PrivateAsset> {
    const row = await repo.findPrivateAsset(this.deps.db, owner, assetId);
    if (!row) throw new AppError('not_found', `Asset ${assetId} is not private`);
    return toPrivateAsset(row);
  }

  async putPrivateAsset(owner: string, assetId: string, sharedWith: string[]): Promise<PrivateAsset> {
    const now = this.deps.clock.now();
    const unique = [...new Set(sharedWith)].filter((w) => w !== owner);
    await repo.upsertPrivateAsset(this.deps.db, { workspace_id: owner, asset_id: assetId, shared_with: JSON.stringify(unique), created_at: now, updated_at: now });
    this.changed(owner);
    return this.getPrivateAsset(owner, assetId);
  }

  async deletePrivateAsset(owner: string, assetId: string): Promise<void> {
    if ((await repo.deletePrivateAsset(this.deps.db, owner, assetId)) === 0) throw new AppError('not_found', `Asset ${assetId} is not private`);
    this.changed(owner);
  }

  /** The workspaces `owner` shares its content with. */
  async listShares(owner: string): Promise<ContentShare[]> {
    return (await repo.listShares(this.deps.db, owner)).map(toShare);
  }

  async getShare(owner: string, granteeId: string): Promise<ContentShare> {
    const row = await repo.findShare(this.deps.db, owner, granteeId);
    if (!row) throw new AppError('not_found', `Your content is not shared with workspace ${granteeId}`);
    return toShare(row);
  }

  /**
   * Lets workspace `granteeId` play `owner`'s content (assets and live events) with its own signed
   * URLs (`coid`); `created` false when it already could. Private-asset entries still decide for
   * their assets.
   */
  async putShare(owner: string, granteeId: string): Promise<{ share: ContentShare; created: boolean }> {
    if (granteeId === owner) throw new AppError('unprocessable', 'A workspace always plays its own content: share with another workspace');
    if (!(await repo.workspaceExists(this.deps.db, granteeId))) throw new AppError('not_found', `Workspace ${granteeId} does not exist`);
    const created = await repo.insertShare(this.deps.db, { workspace_id: owner, grantee_id: granteeId, created_at: this.deps.clock.now() });
    this.changed(owner);
    return { share: await this.getShare(owner, granteeId), created };
  }

  /** Stops sharing with `granteeId`: its URLs naming `owner` in `coid` answer 102 again (sessions already playing run until their URL expires). */
  async deleteShare(owner: string, granteeId: string): Promise<ContentShare> {
    const share = await this.getShare(owner, granteeId);
    await repo.deleteShare(this.deps.db, owner, granteeId);
    this.changed(owner);
    return share;
  }
}
