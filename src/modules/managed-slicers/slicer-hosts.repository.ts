import type { Db } from '../../platform/db/database.js';
import type { LiveStatus } from './live-status.js';
import { toSlicer } from './managed-slicers.repository.js';
import type { SlicerRecord } from './slicer-store.js';

/**
 * Host leases of slicer processes: which instance runs a slicer's ffmpeg, until when unrenewed,
 * and the status it last wrote. An instance takes a slicer when it carries out one of its
 * tasks (the previous host sees its lease gone at its next renewal and stops its process), and
 * takes over a slicer that should run once its host stopped renewing.
 */
export class SlicerHostRepository {
  constructor(private readonly db: Db) {}

  /** Makes `owner` the host of the slicer, whoever held it. False when the slicer is gone. */
  async take(slicerId: string, owner: string, expiresAt: number): Promise<boolean> {
    const result = await this.db
      .updateTable('managed_slicers')
      .set({ host_owner: owner, host_expires_at: expiresAt })
      .where('id', '=', slicerId)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /** Takes a slicer that should run and has no live host; false when another instance was first (or it has a host). */
  async takeOver(slicerId: string, owner: string, now: number, expiresAt: number): Promise<boolean> {
    const result = await this.db
      .updateTable('managed_slicers')
      .set({ host_owner: owner, host_expires_at: expiresAt })
      .where('id', '=', slicerId)
      .where('state', '=', 'running')
      .where((eb) => eb.or([eb('host_owner', 'is', null), eb('host_expires_at', 'is', null), eb('host_expires_at', '<=', now)]))
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /** Extends the lease and stores the status; false when `owner` is not the host any more (or the slicer is gone). */
  async renew(slicerId: string, owner: string, expiresAt: number, status: LiveStatus | undefined): Promise<boolean> {
    const result = await this.db
      .updateTable('managed_slicers')
      .set({ host_expires_at: expiresAt, live_status: status ? JSON.stringify(status) : null })
      .where('id', '=', slicerId)
      .where('host_owner', '=', owner)
      .where('state', '!=', 'deleted')
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /** Gives the slicer up (its process stopped here). */
  async release(slicerId: string, owner: string): Promise<void> {
    await this.db
      .updateTable('managed_slicers')
      .set({ host_owner: null, host_expires_at: null, live_status: null })
      .where('id', '=', slicerId)
      .where('host_owner', '=', owner)
      .execute();
  }

  /** Records the ingest URL of a slicer taken over here (its port or host changed). */
  async setIngestUrl(slicerId: string, owner: string, ingestUrl: string): Promise<void> {
    await this.db.updateTable('managed_slicers').set({ ingest_url: ingestUrl }).where('id', '=', slicerId).where('host_owner', '=', owner).execute();
  }

  /** Ends every host lease at once (embedded mode starts as the only instance: the previous process's slicers are its own to run). */
  async expireAll(now: number): Promise<void> {
    await this.db.updateTable('managed_slicers').set({ host_expires_at: now }).where('host_owner', 'is not', null).execute();
  }

  /** Slicers that should run and have no live host. */
  async orphans(now: number, limit: number): Promise<SlicerRecord[]> {
    const rows = await this.db
      .selectFrom('managed_slicers')
      .selectAll()
      .where('state', '=', 'running')
      .where((eb) => eb.or([eb('host_owner', 'is', null), eb('host_expires_at', 'is', null), eb('host_expires_at', '<=', now)]))
      .orderBy('created_at')
      .limit(limit)
      .execute();
    return rows.map(toSlicer);
  }
}
