import type { Db } from '../../platform/db/database.js';
import type {
  PlaybackAdConfigTable, PlaybackAppKeyTable, PlaybackDrmPolicyTable, PlaybackPrivateAssetTable, PlaybackShareTable,
} from './playback-edge.tables.js';

export type AppKeyRow = PlaybackAppKeyTable;
export type AdConfigRow = PlaybackAdConfigTable;
export type DrmPolicyRow = PlaybackDrmPolicyTable;
export type PrivateAssetRow = PlaybackPrivateAssetTable;
export type ShareRow = PlaybackShareTable;

// Application keys: every version of a name, oldest first.

export const listAppKeyVersions = (db: Db, owner: string, name?: string) => {
  let q = db.selectFrom('playback_app_keys').selectAll().where('workspace_id', '=', owner);
  if (name !== undefined) q = q.where('name', '=', name);
  return q.orderBy('name').orderBy('version').execute();
};

export const insertAppKeyVersion = (db: Db, row: AppKeyRow) => db.insertInto('playback_app_keys').values(row).execute();

export const latestAppKeyVersion = async (db: Db, owner: string, name: string): Promise<number> => {
  const row = await db
    .selectFrom('playback_app_keys')
    .select((eb) => eb.fn.max('version').as('latest'))
    .where('workspace_id', '=', owner)
    .where('name', '=', name)
    .executeTakeFirst();
  return row?.latest === null || row?.latest === undefined ? 0 : Number(row.latest);
};

export const revokeAppKeyVersion = (db: Db, owner: string, name: string, version: number, at: number) =>
  db
    .updateTable('playback_app_keys')
    .set({ revoked_at: at })
    .where('workspace_id', '=', owner)
    .where('name', '=', name)
    .where('version', '=', version)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();

export const deleteAppKey = async (db: Db, owner: string, name: string): Promise<number> => {
  const result = await db.deleteFrom('playback_app_keys').where('workspace_id', '=', owner).where('name', '=', name).executeTakeFirst();
  return Number(result.numDeletedRows);
};

// Ad configurations.

export const findAdConfig = (db: Db, owner: string, name: string) =>
  db.selectFrom('playback_ad_configs').selectAll().where('workspace_id', '=', owner).where('name', '=', name).executeTakeFirst();

export const listAdConfigs = (db: Db, owner: string) =>
  db.selectFrom('playback_ad_configs').selectAll().where('workspace_id', '=', owner).orderBy('name').execute();

export const upsertAdConfig = (db: Db, row: AdConfigRow) =>
  db
    .insertInto('playback_ad_configs')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['workspace_id', 'name']).doUpdateSet({
        ad_server_url: row.ad_server_url,
        ad_asset_ids: row.ad_asset_ids,
        simulated_latency_ms: row.simulated_latency_ms,
        timeout_ms: row.timeout_ms,
        updated_at: row.updated_at,
      }),
    )
    .execute();

export const deleteAdConfig = async (db: Db, owner: string, name: string): Promise<number> => {
  const result = await db.deleteFrom('playback_ad_configs').where('workspace_id', '=', owner).where('name', '=', name).executeTakeFirst();
  return Number(result.numDeletedRows);
};

// DRM policies.

export const findDrmPolicy = (db: Db, owner: string, name: string) =>
  db.selectFrom('playback_drm_policies').selectAll().where('workspace_id', '=', owner).where('name', '=', name).executeTakeFirst();

export const listDrmPolicies = (db: Db, owner: string) =>
  db.selectFrom('playback_drm_policies').selectAll().where('workspace_id', '=', owner).orderBy('name').execute();

export const upsertDrmPolicy = (db: Db, row: DrmPolicyRow) =>
  db
    .insertInto('playback_drm_policies')
    .values(row)
    .onConflict((oc) => oc.columns(['workspace_id', 'name']).doUpdateSet({ provider: row.provider, settings: row.settings, updated_at: row.updated_at }))
    .execute();

export const deleteDrmPolicy = async (db: Db, owner: string, name: string): Promise<number> => {
  const result = await db.deleteFrom('playback_drm_policies').where('workspace_id', '=', owner).where('name', '=', name).executeTakeFirst();
  return Number(result.numDeletedRows);
};

// Private assets.

export const findPrivateAsset = (db: Db, owner: string, assetId: string) =>
  db.selectFrom('playback_private_assets').selectAll().where('workspace_id', '=', owner).where('asset_id', '=', assetId).executeTakeFirst();

export const listPrivateAssets = (db: Db, owner: string) =>
  db.selectFrom('playback_private_assets').selectAll().where('workspace_id', '=', owner).orderBy('asset_id').execute();

export const upsertPrivateAsset = (db: Db, row: PrivateAssetRow) =>
  db
    .insertInto('playback_private_assets')
    .values(row)
    .onConflict((oc) => oc.columns(['workspace_id', 'asset_id']).doUpdateSet({ shared_with: row.shared_with, updated_at: row.updated_at }))
    .execute();

export const deletePrivateAsset = async (db: Db, owner: string, assetId: string): Promise<number> => {
  const result = await db.deleteFrom('playback_private_assets').where('workspace_id', '=', owner).where('asset_id', '=', assetId).executeTakeFirst();
  return Number(result.numDeletedRows);
};

// Workspace-level shares.

/** Inserts a share; false when it existed already. */
export const insertShare = async (db: Db, row: ShareRow): Promise<boolean> => {
  const result = await db.insertInto('playback_shares').values(row).onConflict((oc) => oc.columns(['workspace_id', 'grantee_id']).doNothing()).executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
};

export const findShare = (db: Db, owner: string, granteeId: string) =>
  db.selectFrom('playback_shares').selectAll().where('workspace_id', '=', owner).where('grantee_id', '=', granteeId).executeTakeFirst();

/** The workspaces `owner` shares its content with, oldest share first. */
export const listShares = (db: Db, owner: string) =>
  db.selectFrom('playback_shares').selectAll().where('workspace_id', '=', owner).orderBy('created_at').orderBy('grantee_id').execute();

export const deleteShare = async (db: Db, owner: string, granteeId: string): Promise<number> => {
  const result = await db.deleteFrom('playback_shares').where('workspace_id', '=', owner).where('grantee_id', '=', granteeId).executeTakeFirst();
  return Number(result.numDeletedRows);
};

/** Whether `id` is a workspace (a share names an existing one). */
export const workspaceExists = async (db: Db, id: string): Promise<boolean> =>
  (await db.selectFrom('workspaces').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;

/**
 * Deletes the whole playback catalogue of a workspace (deleting the workspace), the shares it
 * gave and the shares it was given; rows deleted.
 */
export async function deleteWorkspaceRows(db: Db, owner: string): Promise<number> {
  let rows = 0;
  for (const table of ['playback_app_keys', 'playback_ad_configs', 'playback_drm_policies', 'playback_private_assets'] as const) {
    rows += Number((await db.deleteFrom(table).where('workspace_id', '=', owner).executeTakeFirst()).numDeletedRows);
  }
  const shares = await db
    .deleteFrom('playback_shares')
    .where((eb) => eb.or([eb('workspace_id', '=', owner), eb('grantee_id', '=', owner)]))
    .executeTakeFirst();
  return rows + Number(shares.numDeletedRows);
}
