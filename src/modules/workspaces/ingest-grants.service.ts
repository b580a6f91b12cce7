import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import { AppError } from '../../platform/errors.js';
import * as repo from './ingest-grants.repository.js';
import { findWorkspace } from './workspaces.repository.js';
import type { IngestOwners } from '../vod-stats/ingest/event-ingest.js';

/** Workspace `workspaceId` lets the ingest keys of workspace `granteeId` submit events for it. */
export interface IngestGrant {
  workspaceId: string;
  granteeId: string;
  createdAt: number;
}

export interface IngestGrantServiceDeps {
  db: Db;
  clock: Clock;
  /** How long a grantee's grants are reused before they are read again (grants changed by another process). Default 1 s. */
  ttlMs?: number;
}

const toGrant = (row: repo.IngestGrantRow): IngestGrant => ({ workspaceId: row.workspace_id, granteeId: row.grantee_id, createdAt: row.created_at });

/** Cached grantees at most (each a small set); past it the cache starts over. */
const MAX_CACHED = 10_000;

/**
 * Ingest grants: managed by the admin API and the CLI, read by statistics ingest (with a short
 * cache, like the key ring, so a grant changed by the CLI or another instance takes effect
 * within a second; a change made here takes effect at once).
 */
export class IngestGrantService implements IngestOwners {
  private readonly cache = new Map<string, { owners: Promise<ReadonlySet<string>>; loadedAt: number }>();
  private readonly ttlMs: number;

  constructor(private readonly deps: IngestGrantServiceDeps) {
    this.ttlMs = deps.ttlMs ?? 1000;
  }

  private async requireWorkspace(id: string): Promise<void> {
    if (!(await findWorkspace(this.deps.db, id))) throw new AppError('not_found', `Workspace ${id} does not exist`);
  }

  /** Lets the ingest keys of `granteeId` submit for `workspaceId`; `created` false when it already could. */
  async grant(workspaceId: string, granteeId: string): Promise<{ grant: IngestGrant; created: boolean }> {
    await this.requireWorkspace(workspaceId);
    await this.requireWorkspace(granteeId);
    if (workspaceId === granteeId) {
      throw new AppError('unprocessable', "A workspace's own ingest keys always submit for it: nothing to grant");
    }
    const created = await repo.insertGrant(this.deps.db, { workspace_id: workspaceId, grantee_id: granteeId, created_at: this.deps.clock.now() });
    this.cache.delete(granteeId);
    const row = await repo.findGrant(this.deps.db, workspaceId, granteeId);
    if (!row) throw new AppError('conflict', 'The grant was revoked while it was being created');
    return { grant: toGrant(row), created };
  }

  /** Withdraws a grant (404 when there is none). */
  async revoke(workspaceId: string, granteeId: string): Promise<IngestGrant> {
    const row = await repo.findGrant(this.deps.db, workspaceId, granteeId);
    if (!row || !(await repo.deleteGrant(this.deps.db, workspaceId, granteeId))) {
      throw new AppError('not_found', `Workspace ${granteeId} has no ingest grant from workspace ${workspaceId}`);
    }
    this.cache.delete(granteeId);
    return toGrant(row);
  }

  /** The workspaces whose ingest keys may submit for `workspaceId`. */
  async list(workspaceId: string): Promise<IngestGrant[]> {
    await this.requireWorkspace(workspaceId);
    return (await repo.grantsOf(this.deps.db, workspaceId)).map(toGrant);
  }

  allowedOwners(owner: string): Promise<ReadonlySet<string>> {
    const now = this.deps.clock.now();
    const cached = this.cache.get(owner);
    if (cached && now - cached.loadedAt < this.ttlMs) return cached.owners;
    const owners = repo.grantorsOf(this.deps.db, owner).then((grantors) => new Set([owner, ...grantors]) as ReadonlySet<string>);
    if (this.cache.size >= MAX_CACHED) this.cache.clear();
    this.cache.set(owner, { owners, loadedAt: now });
    owners.catch(() => this.cache.delete(owner));
    return owners;
  }

  async existing(ids: readonly string[]): Promise<ReadonlySet<string>> {
    return new Set(await repo.existingWorkspaces(this.deps.db, ids));
  }
}
