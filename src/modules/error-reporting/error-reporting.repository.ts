import type { Db } from '../../platform/db/database.js';
import type { ErrorReportingSettingsTable } from './error-reporting.tables.js';
import { deleteWorkspaceDeliveries } from '../../platform/outbound/attempt-log.repository.js';

export type SettingsRow = ErrorReportingSettingsTable;

export const findSettings = (db: Db, owner: string) =>
  db.selectFrom('error_reporting_settings').selectAll().where('workspace_id', '=', owner).executeTakeFirst();

/** Inserts the row unless the workspace already has one (two first requests may race). */
export const insertSettingsIfAbsent = (db: Db, row: SettingsRow) =>
  db
    .insertInto('error_reporting_settings')
    .values(row)
    .onConflict((oc) => oc.column('workspace_id').doNothing())
    .execute();

export const updateCallback = (db: Db, owner: string, change: { callback_url: string | null; enabled: number; updated_at: number }) =>
  db
    .updateTable('error_reporting_settings')
    .set((eb) => ({ ...change, revision: eb('revision', '+', 1) }))
    .where('workspace_id', '=', owner)
    .executeTakeFirst();

export const updateSecrets = (
  db: Db,
  owner: string,
  change: { secret_sealed: string; previous_secret_sealed: string | null; previous_secret_expires_at: number | null; updated_at: number },
) =>
  db
    .updateTable('error_reporting_settings')
    .set((eb) => ({ ...change, revision: eb('revision', '+', 1) }))
    .where('workspace_id', '=', owner)
    .executeTakeFirst();

/** Every workspace's revision: how other instances notice a change (a narrow scan of a small table). */
export const listRevisions = (db: Db) =>
  db.selectFrom('error_reporting_settings').select(['workspace_id', 'revision']).execute();

export const findSettingsOf = (db: Db, owners: readonly string[]) =>
  owners.length === 0
    ? Promise.resolve([])
    : db.selectFrom('error_reporting_settings').selectAll().where('workspace_id', 'in', owners).execute();

/** Deletes a workspace's callback settings and logged delivery attempts (deleting the workspace); rows deleted. */
export const deleteWorkspaceRows = async (db: Db, owner: string): Promise<number> =>
  Number((await db.deleteFrom('error_reporting_settings').where('workspace_id', '=', owner).executeTakeFirst()).numDeletedRows) +
  (await deleteWorkspaceDeliveries(db, owner));
