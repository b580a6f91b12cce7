import type { Db } from '../../platform/db/database.js';
import type { ApiKeyTable, WorkspaceTable } from '../../platform/db/schema.js';

export type WorkspaceRow = WorkspaceTable;
export type ApiKeyRow = ApiKeyTable;

export const insertWorkspace = (db: Db, row: WorkspaceRow) => db.insertInto('workspaces').values(row).execute();

export const findWorkspace = (db: Db, id: string) =>
  db.selectFrom('workspaces').selectAll().where('id', '=', id).executeTakeFirst();

export const listWorkspaces = (db: Db) => db.selectFrom('workspaces').selectAll().orderBy('created_at').orderBy('id').execute();

export const countWorkspaces = async (db: Db): Promise<number> => {
  const row = await db.selectFrom('workspaces').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
};

export const insertApiKey = (db: Db, row: ApiKeyRow) => db.insertInto('api_keys').values(row).execute();

export const listApiKeys = (db: Db, workspaceId: string) =>
  db.selectFrom('api_keys').selectAll().where('workspace_id', '=', workspaceId).orderBy('created_at').orderBy('id').execute();

export const findApiKey = (db: Db, workspaceId: string, keyId: string) =>
  db.selectFrom('api_keys').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', keyId).executeTakeFirst();

export const revokeApiKey = (db: Db, workspaceId: string, keyId: string, at: number) =>
  db
    .updateTable('api_keys')
    .set({ revoked_at: at })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', keyId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
