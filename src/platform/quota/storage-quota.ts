import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { Db } from '../db/database.js';
import { lockWorkspace, storageQuotaExceeded } from './workspace-quotas.js';
import type { QuotaTables } from './quota.tables.js';

/** Where a workspace's stored bytes are: the asset library's rows, the slicers' live folders... */
export interface StoredBytesSource {
  readonly name: string;
  /** The workspace's bytes here; a database source reads through `db` (it may be the quota's transaction). */
  bytes(db: Db, workspaceId: string): Promise<number>;
}

/** Bytes held for a write under way; `bytes` grows as a body without a length arrives. */
export interface StorageReservation {
  readonly id: string;
  readonly workspaceId: string;
  bytes: number;
  /** True once the write was stored or gave up: the row is gone. */
  settled: boolean;
}

export interface StorageQuotaOptions {
  db: Db;
  clock: Clock;
  /** PLAYLINE_QUOTA_STORAGE_BYTES */
  limitBytes: number;
  /**
   * How long a reservation of `bytes` may stay without being stored or released before it stops
   * counting (its instance died): the time such a body may take to arrive.
   */
  holdMs(bytes: number): number;
}

export interface StorageUse {
  /** Every source plus the reservations of writes under way. */
  total: number;
  bySource: Record<string, number>;
  reserved: number;
}

/**
 * The storage quota of each workspace. Stored bytes are summed over the registered sources;
 * writes under way hold reservations in the database, decided one at a time per workspace
 * (`lockWorkspace`), so two concurrent uploads cannot both pass under the quota, on one
 * instance or several sharing PostgreSQL.
 */
export class StorageQuota {
  private readonly sources: StoredBytesSource[] = [];

  constructor(private readonly options: StorageQuotaOptions) {}

  get limitBytes(): number {
    return this.options.limitBytes;
  }

  addSource(source: StoredBytesSource): void {
    this.sources.push(source);
  }

  /** What the workspace stores now, reservations included. */
  async use(workspaceId: string, db: Db = this.options.db): Promise<StorageUse> {
    const bySource: Record<string, number> = {};
    let total = 0;
    for (const source of this.sources) {
      const bytes = await source.bytes(db, workspaceId);
      bySource[source.name] = bytes;
      total += bytes;
    }
    const reserved = await reservedBytes(db, workspaceId, this.options.clock.now());
    return { total: total + reserved, bySource, reserved };
  }

  /** Whether the workspace stores less than its quota (a recording under way goes on while it does). */
  async hasRoom(workspaceId: string): Promise<boolean> {
    return (await this.use(workspaceId)).total < this.options.limitBytes;
  }

  /** Holds `bytes` for a write of the workspace; throws 507 storage_quota_exceeded when they do not fit. */
  async reserve(workspaceId: string, bytes: number): Promise<StorageReservation> {
    const id = randomUUID();
    await this.options.db.transaction().execute(async (trx) => {
      await lockWorkspace(trx, workspaceId);
      const { total } = await this.use(workspaceId, trx);
      if (total + bytes > this.options.limitBytes) throw storageQuotaExceeded(this.options.limitBytes, total, bytes);
      await trx.insertInto('storage_reservations').values({ id, workspace_id: workspaceId, bytes, expires_at: this.expiry(bytes) }).execute();
    });
    return { id, workspaceId, bytes, settled: false };
  }

  /**
   * Raises a reservation towards `wanted` bytes (less if only less fits), for a body whose length
   * is learnt as it arrives; throws 507 when not even `needed` fit.
   */
  async grow(reservation: StorageReservation, wanted: number, needed: number): Promise<void> {
    if (reservation.settled) throw new Error('a settled storage reservation cannot grow');
    await this.options.db.transaction().execute(async (trx) => {
      await lockWorkspace(trx, reservation.workspaceId);
      const { total } = await this.use(reservation.workspaceId, trx);
      const others = total - reservation.bytes;
      const room = this.options.limitBytes - others;
      if (needed > room) throw storageQuotaExceeded(this.options.limitBytes, others, needed);
      const bytes = Math.max(needed, Math.min(wanted, room));
      const updated = await trx.updateTable('storage_reservations').set({ bytes, expires_at: this.expiry(bytes) }).where('id', '=', reservation.id).executeTakeFirst();
      // Expired meanwhile (a body slower than its hold): hold it afresh.
      if (updated.numUpdatedRows === 0n) await trx.insertInto('storage_reservations').values({ id: reservation.id, workspace_id: reservation.workspaceId, bytes, expires_at: this.expiry(bytes) }).execute();
      reservation.bytes = bytes;
    });
  }

  /**
   * Ends a reservation: the write failed, or it was stored and now counts where it landed. Pass
   * the transaction that records the stored bytes, so they never count twice nor not at all.
   */
  async settle(reservation: StorageReservation, db: Db = this.options.db): Promise<void> {
    if (reservation.settled) return;
    await db.deleteFrom('storage_reservations').where('id', '=', reservation.id).execute();
    reservation.settled = true;
  }

  /** Removes reservations that stopped counting (their instance died); how many. */
  async sweepExpired(): Promise<number> {
    const result = await this.options.db.deleteFrom('storage_reservations').where('expires_at', '<=', this.options.clock.now()).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  private expiry(bytes: number): number {
    return this.options.clock.now() + this.options.holdMs(bytes);
  }
}

async function reservedBytes(db: Db, workspaceId: string, now: number): Promise<number> {
  const row = await db
    .selectFrom('storage_reservations')
    .select((eb) => eb.fn.sum<number | string | null>('bytes').as('n'))
    .where('workspace_id', '=', workspaceId)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

export type { QuotaTables };
