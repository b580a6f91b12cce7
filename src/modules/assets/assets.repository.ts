import { sql, type ExpressionBuilder, type Selectable } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import type { Database } from '../../platform/db/schema.js';
import { assetStates, type AssetState, type RenditionSummary } from './assets.schema.js';
import type { AssetTable } from './assets.tables.js';
import type {
  AssetCounts,
  AssetCursor,
  AssetFilter,
  AssetJobStore,
  AssetRecord,
  AssetStore,
  ClaimedJob,
  ClaimInput,
  LeaseFence,
  NewAsset,
  NewRecording,
  PackagedResult,
  Page,
} from './asset-store.js';

type AssetRow = Selectable<AssetTable>;

const CLAIM_CANDIDATES = 8;

/** Assets and their packaging jobs in SQLite or PostgreSQL (the same queries on both). */
export class AssetRepository implements AssetStore, AssetJobStore {
  constructor(private readonly db: Db) {}

  insertWithJob(asset: NewAsset, admit?: (trx: Db) => Promise<void>): Promise<AssetRecord> {
    return this.db.transaction().execute(async (trx) => {
      await admit?.(trx);
      const row = await trx
        .insertInto('assets')
        .values({
          id: asset.id,
          workspace_id: asset.workspaceId,
          title: asset.title,
          state: 'uploaded',
          progress: 0,
          size_bytes: asset.sizeBytes,
          stored_bytes: asset.sizeBytes,
          duration_ms: null,
          renditions: null,
          failure_reason: null,
          source_slicer_id: null,
          recording_started_at: null,
          recording_ended_at: null,
          created_at: asset.createdAt,
          updated_at: asset.createdAt,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      await trx
        .insertInto('asset_jobs')
        .values({ asset_id: asset.id, workspace_id: asset.workspaceId, queued_at: asset.createdAt, lease_owner: null, lease_expires_at: null, attempts: 0 })
        .execute();
      return toAsset(row);
    });
  }

  async find(workspaceId: string, assetId: string): Promise<AssetRecord | undefined> {
    const row = await this.db.selectFrom('assets').selectAll().where('id', '=', assetId).where('workspace_id', '=', workspaceId).executeTakeFirst();
    return row && toAsset(row);
  }

  async insertRecording(r: NewRecording): Promise<AssetRecord> {
    const row = await this.db
      .insertInto('assets')
      .values({
        id: r.id,
        workspace_id: r.workspaceId,
        title: r.title,
        state: 'ready',
        progress: 100,
        size_bytes: r.storedBytes,
        stored_bytes: r.storedBytes,
        duration_ms: r.durationMs,
        renditions: JSON.stringify(r.renditions),
        failure_reason: null,
        source_slicer_id: r.slicerId,
        recording_started_at: r.startedAt,
        recording_ended_at: r.endedAt,
        created_at: r.createdAt,
        updated_at: r.createdAt,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toAsset(row);
  }

  async list(workspaceId: string, filter: AssetFilter, limit: number | undefined, after?: AssetCursor): Promise<Page<AssetRecord>> {
    let matching = this.db.selectFrom('assets').where('workspace_id', '=', workspaceId);
    if (filter.state !== undefined) matching = matching.where('state', '=', filter.state);
    if (filter.sourceSlicerId !== undefined) matching = matching.where('source_slicer_id', '=', filter.sourceSlicerId);
    let page = matching.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc');
    if (limit !== undefined) page = page.limit(limit);
    if (after) {
      page = page.where((eb) => eb.or([eb('created_at', '<', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('id', '<', after.id)])]));
    }
    const [rows, count] = await Promise.all([page.execute(), matching.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()]);
    return { items: rows.map(toAsset), total: Number(count.n) };
  }

  async updateTitle(workspaceId: string, assetId: string, title: string, now: number): Promise<AssetRecord | undefined> {
    const row = await this.db
      .updateTable('assets')
      .set({ title, updated_at: now })
      .where('id', '=', assetId)
      .where('workspace_id', '=', workspaceId)
      .returningAll()
      .executeTakeFirst();
    return row && toAsset(row);
  }

  delete(workspaceId: string, assetId: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('asset_jobs').where('asset_id', '=', assetId).where('workspace_id', '=', workspaceId).execute();
      const result = await trx.deleteFrom('assets').where('id', '=', assetId).where('workspace_id', '=', workspaceId).executeTakeFirst();
      return result.numDeletedRows > 0n;
    });
  }

  async counts(now: number): Promise<AssetCounts> {
    const jobs = this.db.selectFrom('asset_jobs').select((eb) => eb.fn.countAll<number>().as('n'));
    const [states, total, running] = await Promise.all([
      this.db.selectFrom('assets').select(['state', (eb) => eb.fn.countAll<number>().as('n')]).groupBy('state').execute(),
      jobs.executeTakeFirstOrThrow(),
      jobs.where('lease_expires_at', '>', now).executeTakeFirstOrThrow(),
    ]);
    const byState = Object.fromEntries(assetStates.map((s) => [s, 0])) as Record<AssetState, number>;
    for (const { state, n } of states) if (state in byState) byState[state as AssetState] = Number(n);
    return { byState, jobsRunning: Number(running.n), jobsQueued: Number(total.n) - Number(running.n) };
  }

  // --- the packaging queue ---

  async releaseLeases(now: number, owner?: string): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      let held = trx.selectFrom('asset_jobs').select('asset_id').where('lease_owner', 'is not', null);
      if (owner !== undefined) held = held.where('lease_owner', '=', owner);
      const ids = (await held.execute()).map((r) => r.asset_id);
      if (ids.length === 0) return 0;
      await trx.updateTable('asset_jobs').set({ lease_owner: null, lease_expires_at: null }).where('asset_id', 'in', ids).execute();
      await trx.updateTable('assets').set(BACK_IN_QUEUE(now)).where('id', 'in', ids).where('state', 'in', PACKAGING_STATES).execute();
      return ids.length;
    });
  }

  /**
   * Claims the next job round-robin across workspaces: the workspace whose last claim is the
   * oldest (or that never had one) goes first, and its oldest job; so a workspace that queued a
   * hundred uploads delays another's next upload by one job at most (per free slot).
   */
  async claimNext({ owner, now, leaseMs }: ClaimInput): Promise<ClaimedJob | undefined> {
    const candidates = await this.db
      .selectFrom('asset_jobs')
      .leftJoin('asset_claim_turns', 'asset_claim_turns.workspace_id', 'asset_jobs.workspace_id')
      .select('asset_jobs.asset_id')
      .where((eb) => eb.or([eb('asset_jobs.lease_expires_at', 'is', null), eb('asset_jobs.lease_expires_at', '<=', now)]))
      .orderBy(sql`coalesce(${sql.ref('asset_claim_turns.turn')}, 0)`)
      .orderBy('asset_jobs.queued_at')
      .orderBy('asset_jobs.asset_id')
      .limit(CLAIM_CANDIDATES)
      .execute();
    for (const { asset_id: assetId } of candidates) {
      // Conditional on still being claimable: of two instances racing for one job, one wins.
      const claimed = await this.db.transaction().execute(async (trx) => {
        const job = await trx
          .updateTable('asset_jobs')
          .set((eb) => ({ lease_owner: owner, lease_expires_at: now + leaseMs, attempts: eb('attempts', '+', 1) }))
          .where('asset_id', '=', assetId)
          .where((eb) => claimable(eb, now))
          .returning(['asset_id', 'workspace_id', 'attempts'])
          .executeTakeFirst();
        if (!job) return undefined;
        // A new attempt starts from scratch: nothing of an earlier one (taken over from a dead instance) plays.
        await trx.updateTable('assets').set({ state: 'processing', progress: 0, duration_ms: null, renditions: null, updated_at: now }).where('id', '=', assetId).execute();
        // The workspace goes to the back of the round: after every other one's last claim.
        const last = await trx.selectFrom('asset_claim_turns').select((eb) => eb.fn.max('turn').as('top')).executeTakeFirst();
        const turn = Number(last?.top ?? 0) + 1;
        await trx
          .insertInto('asset_claim_turns')
          .values({ workspace_id: job.workspace_id, turn })
          .onConflict((oc) => oc.column('workspace_id').doUpdateSet({ turn }))
          .execute();
        return { assetId: job.asset_id, workspaceId: job.workspace_id, attempts: Number(job.attempts) };
      });
      if (claimed) return claimed;
    }
    return undefined;
  }

  async renewLease(assetId: string, fence: LeaseFence, leaseExpiresAt: number): Promise<boolean> {
    const result = await this.fenced(assetId, fence).set({ lease_expires_at: leaseExpiresAt }).executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  releaseLease(assetId: string, fence: LeaseFence, now: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const result = await trx
        .updateTable('asset_jobs')
        .set({ lease_owner: null, lease_expires_at: null })
        .where('asset_id', '=', assetId)
        .where('lease_owner', '=', fence.owner)
        .where('attempts', '=', fence.attempt)
        .executeTakeFirst();
      if (result.numUpdatedRows === 0n) return false;
      await trx.updateTable('assets').set(BACK_IN_QUEUE(now)).where('id', '=', assetId).execute();
      return true;
    });
  }

  setProgress(assetId: string, fence: LeaseFence, percent: number, now: number): Promise<boolean> {
    return this.updateHeld(assetId, fence, { progress: percent, updated_at: now });
  }

  setPlayable(assetId: string, fence: LeaseFence, result: Omit<PackagedResult, 'storedBytes'>, now: number): Promise<boolean> {
    return this.updateHeld(assetId, fence, { state: 'playable', duration_ms: result.durationMs, renditions: JSON.stringify(result.renditions), updated_at: now });
  }

  /** Changes an asset being packaged under this fence. */
  private async updateHeld(assetId: string, fence: LeaseFence, changes: Partial<AssetTable>): Promise<boolean> {
    const result = await this.db
      .updateTable('assets')
      .set(changes)
      .where('id', '=', assetId)
      .where('state', 'in', PACKAGING_STATES)
      .where(({ exists, selectFrom }) =>
        exists(
          selectFrom('asset_jobs')
            .select('asset_id')
            .where('asset_id', '=', assetId)
            .where('lease_owner', '=', fence.owner)
            .where('attempts', '=', fence.attempt),
        ),
      )
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  finishReady(assetId: string, fence: LeaseFence, result: PackagedResult, now: number): Promise<boolean> {
    return this.finish(assetId, fence, {
      state: 'ready',
      progress: 100,
      duration_ms: result.durationMs,
      renditions: JSON.stringify(result.renditions),
      failure_reason: null,
      updated_at: now,
      ...(result.storedBytes !== undefined ? { stored_bytes: result.storedBytes } : {}),
    });
  }

  finishFailed(assetId: string, fence: LeaseFence, reason: string, now: number, storedBytes = 0): Promise<boolean> {
    // A failed asset keeps its upload only (the runner removes the output), until a retry or a delete.
    return this.finish(assetId, fence, { state: 'failed', failure_reason: reason, stored_bytes: storedBytes, updated_at: now });
  }

  requeueFailed(workspaceId: string, assetId: string, now: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const result = await trx
        .updateTable('assets')
        .set({ ...BACK_IN_QUEUE(now), failure_reason: null })
        .where('id', '=', assetId)
        .where('workspace_id', '=', workspaceId)
        .where('state', '=', 'failed')
        .executeTakeFirst();
      if (result.numUpdatedRows === 0n) return false;
      await trx.insertInto('asset_jobs').values({ asset_id: assetId, workspace_id: workspaceId, queued_at: now, lease_owner: null, lease_expires_at: null, attempts: 0 }).execute();
      return true;
    });
  }

  async exists(assetId: string): Promise<boolean> {
    return (await this.db.selectFrom('assets').select('id').where('id', '=', assetId).executeTakeFirst()) !== undefined;
  }

  private finish(assetId: string, fence: LeaseFence, changes: Partial<AssetTable>): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const removed = await trx
        .deleteFrom('asset_jobs')
        .where('asset_id', '=', assetId)
        .where('lease_owner', '=', fence.owner)
        .where('attempts', '=', fence.attempt)
        .executeTakeFirst();
      if (removed.numDeletedRows === 0n) return false;
      await trx.updateTable('assets').set(changes).where('id', '=', assetId).execute();
      return true;
    });
  }

  private fenced(assetId: string, fence: LeaseFence) {
    return this.db.updateTable('asset_jobs').where('asset_id', '=', assetId).where('lease_owner', '=', fence.owner).where('attempts', '=', fence.attempt);
  }
}

/** The states of an asset whose job holds a lease. */
const PACKAGING_STATES: AssetState[] = ['processing', 'playable'];

/** An asset whose job goes back to the queue: nothing of the attempt is left to play. */
const BACK_IN_QUEUE = (now: number) => ({ state: 'uploaded', progress: 0, duration_ms: null, renditions: null, updated_at: now });

/** No lease, or an expired one. */
function claimable(eb: ExpressionBuilder<Database, 'asset_jobs'>, now: number) {
  return eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<=', now)]);
}

function toAsset(row: AssetRow): AssetRecord {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    title: row.title,
    state: row.state as AssetState,
    progress: Number(row.progress),
    sizeBytes: Number(row.size_bytes),
    durationMs: row.duration_ms === null ? null : Number(row.duration_ms),
    renditions: row.renditions === null ? [] : (JSON.parse(row.renditions) as RenditionSummary[]),
    failureReason: row.failure_reason,
    recording:
      row.source_slicer_id === null || row.source_slicer_id === undefined
        ? null
        : { slicerId: row.source_slicer_id, startedAt: Number(row.recording_started_at), endedAt: Number(row.recording_ended_at) },
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

/**
 * Deletes every asset row (and queued job) of a workspace being deleted; how many rows went.
 * Runs inside the deletion's transaction (`db` is that transaction).
 */
export async function deleteWorkspaceAssets(db: Db, workspaceId: string): Promise<number> {
  const jobs = await db.deleteFrom('asset_jobs').where('workspace_id', '=', workspaceId).executeTakeFirst();
  const assets = await db.deleteFrom('assets').where('workspace_id', '=', workspaceId).executeTakeFirst();
  await db.deleteFrom('asset_claim_turns').where('workspace_id', '=', workspaceId).execute();
  return Number(jobs.numDeletedRows) + Number(assets.numDeletedRows);
}

/** Bytes the workspace's assets keep on disk (its storage quota); `db` may be the quota's transaction. */
export async function assetStoredBytes(db: Db, workspaceId: string): Promise<number> {
  const row = await db.selectFrom('assets').select((eb) => eb.fn.sum<number | string | null>('stored_bytes').as('n')).where('workspace_id', '=', workspaceId).executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Assets the workspace holds (its asset quota). */
export async function countWorkspaceAssets(db: Db, workspaceId: string): Promise<number> {
  const row = await db.selectFrom('assets').select((eb) => eb.fn.countAll<number>().as('n')).where('workspace_id', '=', workspaceId).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Workspaces holding at least `n` assets (metrics). */
export async function workspacesWithAssets(db: Db, n: number): Promise<number> {
  const rows = await db.selectFrom('assets').select('workspace_id').groupBy('workspace_id').having((eb) => eb.fn.countAll(), '>=', n).execute();
  return rows.length;
}
