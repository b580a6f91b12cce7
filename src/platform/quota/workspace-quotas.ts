import { PostgresAdapter, sql, type QueryExecutorProvider } from 'kysely';
import type { Config } from '../config.js';
import { AppError } from '../errors.js';

/** The quotas every workspace has, by the name the usage route and refusals give them. */
export const quotaNames = ['storage_bytes', 'assets', 'slicers', 'targets', 'schedules', 'active_pushes'] as const;
export type QuotaName = (typeof quotaNames)[number];
export type QuotaLimits = Record<QuotaName, number>;

/** The setting of each quota, named in refusals so an operator knows what to raise. */
export const quotaSettings: Record<QuotaName, string> = {
  storage_bytes: 'PLAYLINE_QUOTA_STORAGE_BYTES',
  assets: 'PLAYLINE_QUOTA_ASSETS',
  slicers: 'PLAYLINE_QUOTA_SLICERS',
  targets: 'PLAYLINE_QUOTA_TARGETS',
  schedules: 'PLAYLINE_QUOTA_SCHEDULES',
  active_pushes: 'PLAYLINE_QUOTA_ACTIVE_PUSHES',
};

const nouns: Record<Exclude<QuotaName, 'storage_bytes'>, string> = {
  assets: 'assets',
  slicers: 'managed slicers',
  targets: 'publishing targets',
  schedules: 'publishing schedules',
  active_pushes: 'started publishing schedules (pushes)',
};

export const quotaLimitsOf = (config: Pick<Config, 'quotaStorageBytes' | 'quotaAssets' | 'quotaSlicers' | 'quotaTargets' | 'quotaSchedules' | 'quotaActivePushes'>): QuotaLimits => ({
  storage_bytes: config.quotaStorageBytes,
  assets: config.quotaAssets,
  slicers: config.quotaSlicers,
  targets: config.quotaTargets,
  schedules: config.quotaSchedules,
  active_pushes: config.quotaActivePushes,
});

/** 409 quota_exceeded: a count quota is reached; the body names it, its limit and the usage. */
export function quotaExceeded(quota: Exclude<QuotaName, 'storage_bytes'>, limit: number, used: number): AppError {
  return new AppError('quota_exceeded', `This workspace holds ${used} of its ${limit} ${nouns[quota]} (${quotaSettings[quota]}): remove one before adding another`, {
    extra: { quota, limit, used },
  });
}

/** 507 storage_quota_exceeded: storing `adding` more bytes would pass `limit`; the body names the limit, the usage and the request. */
export function storageQuotaExceeded(limit: number, used: number, adding: number, what: { quota?: string; setting?: string; scope?: string } = {}): AppError {
  const quota = what.quota ?? 'storage_bytes';
  const setting = what.setting ?? quotaSettings.storage_bytes;
  const scope = what.scope ?? 'This workspace';
  return new AppError('storage_quota_exceeded', `${scope} stores ${used} of its ${limit} bytes (${setting}); ${adding} more would pass it: delete media first. Nothing was kept.`, {
    extra: { quota, limit, used, requested: adding },
  });
}

/**
 * Serialises quota decisions of one workspace: within a transaction, holds the workspace's row
 * (FOR UPDATE on PostgreSQL, so instances sharing the database decide one after another; SQLite
 * runs one transaction at a time anyway). A count and the insert it admits then cannot interleave
 * with another's.
 */
export async function lockWorkspace(trx: QueryExecutorProvider, workspaceId: string): Promise<void> {
  const forUpdate = trx.getExecutor().adapter instanceof PostgresAdapter ? sql` for update` : sql``;
  await sql`select id from workspaces where id = ${workspaceId}${forUpdate}`.execute(trx);
}
