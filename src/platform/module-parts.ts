import type { BackgroundWork } from './background-work.js';
import type { Db } from './db/database.js';
import type { App } from './http/types.js';

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

/**
 * What a module hands the composition root (`src/runtime.ts`), so that the root loops over
 * modules instead of knowing their internals: its routes, its background work, and its part
 * in deleting a workspace. Migrations are handed over apart (`src/migrations.ts`): they run
 * before any module is built.
 */
export interface ModuleParts {
  /** The module, in logs and errors. */
  readonly name: string;
  /** Routes under the API prefix (`/api/v4`). */
  apiRoutes?(api: App): Promise<void>;
  /** Routes outside the API prefix (the playback edge, media ingest, pull URLs). */
  rootRoutes?(root: App): Promise<void>;
  /**
   * Background work, started in the order the root lists the modules (each module's in its
   * own order) and stopped in reverse.
   */
  readonly work?: readonly BackgroundWork[];
  /** The module's parts in deleting a workspace; stops run in reverse module order (like shutdown), deletes and forgets in order. */
  readonly workspaceData?: readonly WorkspaceDataPart[];
}
