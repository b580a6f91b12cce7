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

/** Deletes a workspace and its keys (after every module deleted its rows); rows deleted, 0: no such workspace. */
export const deleteWorkspace = async (db: Db, id: string): Promise<number> => {
  const keys = Number((await db.deleteFrom('api_keys').where('workspace_id', '=', id).executeTakeFirst()).numDeletedRows);
  const workspaces = Number((await db.deleteFrom('workspaces').where('id', '=', id).executeTakeFirst()).numDeletedRows);
  return workspaces === 0 ? 0 : keys + workspaces;
};

/** The ids among `ids` that are workspaces (statistics are kept only for those). */
export const existingWorkspaceIds = async (db: Db, ids: readonly string[]): Promise<Set<string>> => {
  const found = new Set<string>();
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await db.selectFrom('workspaces').select('id').where('id', 'in', ids.slice(i, i + 500)).execute();
    for (const row of rows) found.add(row.id);
  }
  return found;
};
