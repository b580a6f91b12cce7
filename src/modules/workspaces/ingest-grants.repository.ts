import type { Db } from '../../platform/db/database.js';
import type { IngestGrantTable } from './ingest-grants.tables.js';

export type IngestGrantRow = IngestGrantTable;

/** Inserts a grant; false when it existed already. */
export const insertGrant = async (db: Db, row: IngestGrantRow): Promise<boolean> => {
  const result = await db.insertInto('ingest_grants').values(row).onConflict((oc) => oc.columns(['workspace_id', 'grantee_id']).doNothing()).executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
};

export const findGrant = (db: Db, workspaceId: string, granteeId: string) =>
  db.selectFrom('ingest_grants').selectAll().where('workspace_id', '=', workspaceId).where('grantee_id', '=', granteeId).executeTakeFirst();

export const deleteGrant = async (db: Db, workspaceId: string, granteeId: string): Promise<boolean> => {
  const result = await db.deleteFrom('ingest_grants').where('workspace_id', '=', workspaceId).where('grantee_id', '=', granteeId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
};

/** Who may submit for `workspaceId`. */
export const grantsOf = (db: Db, workspaceId: string) =>
  db.selectFrom('ingest_grants').selectAll().where('workspace_id', '=', workspaceId).orderBy('created_at').orderBy('grantee_id').execute();

/** The workspaces that granted `granteeId`. */
export const grantorsOf = async (db: Db, granteeId: string): Promise<string[]> =>
  (await db.selectFrom('ingest_grants').select('workspace_id').where('grantee_id', '=', granteeId).execute()).map((r) => r.workspace_id);

/** Which of `ids` are workspaces. */
export const existingWorkspaces = async (db: Db, ids: readonly string[]): Promise<string[]> =>
  ids.length === 0 ? [] : (await db.selectFrom('workspaces').select('id').where('id', 'in', ids).execute()).map((r) => r.id);

/** Deletes every grant a workspace gave or was given (the workspace is being deleted); how many went. */
export const deleteWorkspaceGrants = async (db: Db, workspaceId: string): Promise<number> => {
  const result = await db
    .deleteFrom('ingest_grants')
    .where((eb) => eb.or([eb('workspace_id', '=', workspaceId), eb('grantee_id', '=', workspaceId)]))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
};
