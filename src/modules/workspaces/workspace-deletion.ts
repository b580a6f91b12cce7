import type { Db } from '../../platform/db/database.js';
import { AppError } from '../../platform/errors.js';
import * as repo from './workspaces.repository.js';

/**
 * A module's part in deleting a workspace with all its data. Each module deletes its own rows
 * with its own repository function, inside the deletion's one transaction, and may stop what
 * runs for the workspace first and forget what it holds outside the database afterwards.
 */
export interface WorkspaceDataPart {
  /** The module, as the deletion's answer names it. */
  readonly name: string;
  /** Before the rows go: stops what runs for the workspace (publishing, packaging...). */
  stop?(owner: string): Promise<void>;
  /** Deletes the module's rows of the workspace; the number of rows deleted. */
  deleteRows?(db: Db, owner: string): Promise<number>;
  /** After the rows are gone: forgets what the module holds in memory or Redis (statistics, caches). */
  forget?(owner: string): Promise<void>;
}

export interface DeletedWorkspace {
  id: string;
  name: string;
  /** Rows deleted per module (`workspace`: the workspace and its keys). */
  deleted: Record<string, number>;
}

/** Deletes workspaces with everything every module holds for them (admin API, CLI, simulate --cleanup). */
export class WorkspaceDeletion {
  private readonly parts: WorkspaceDataPart[] = [];

  constructor(private readonly db: Db) {}

  /** Adds a module's part (the runtime registers every module's; a module added later adds its own). */
  register(part: WorkspaceDataPart): void {
    this.parts.push(part);
  }

  async delete(id: string): Promise<DeletedWorkspace> {
    const workspace = await repo.findWorkspace(this.db, id);
    if (!workspace) throw new AppError('not_found', `Workspace ${id} does not exist`);
    for (const part of this.parts) await part.stop?.(id);
    const deleted = await this.db.transaction().execute(async (trx) => {
      const counts: Record<string, number> = {};
      for (const part of this.parts) if (part.deleteRows) counts[part.name] = await part.deleteRows(trx, id);
      const rows = await repo.deleteWorkspace(trx, id);
      // Deleted meanwhile by another request: nothing more to do, and say so.
      if (rows === 0) throw new AppError('not_found', `Workspace ${id} does not exist`);
      counts.workspace = rows;
      return counts;
    });
    for (const part of this.parts) await part.forget?.(id);
    return { id, name: workspace.name, deleted };
  }
}
