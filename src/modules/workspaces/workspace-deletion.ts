import type { Db } from '../../platform/db/database.js';
import { AppError } from '../../platform/errors.js';
import type { WorkspaceDataPart } from '../../platform/module-parts.js';
import * as repo from './workspaces.repository.js';

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

  /** Adds a module's part, in module order (the runtime registers every module's parts). */
  register(part: WorkspaceDataPart): void {
    this.parts.push(part);
  }

  async delete(id: string): Promise<DeletedWorkspace> {
    const workspace = await repo.findWorkspace(this.db, id);
    if (!workspace) throw new AppError('not_found', `Workspace ${id} does not exist`);
    // What runs stops in reverse module order, as at shutdown: publishing (which reads the live
    // windows) before the slicers that write them.
    for (const part of [...this.parts].reverse()) await part.stop?.(id);
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
