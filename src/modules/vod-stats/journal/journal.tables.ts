import type { Generated } from 'kysely';

/**
 * One accepted ingest batch, journaled before its 202 (cluster mode: the source of truth the
 * Redis statistics are rebuilt from). `body` is the request body exactly as received.
 */
export interface VodStatsJournalTable {
  /** Journal order, assigned by the database. */
  seq: Generated<number>;
  received_at: number;
  /** 'ndjson' | 'json'. */
  kind: string;
  auth_owner: string;
  /** 1 when the batch could name any workspace (the playback edge; ingest keys before grants). */
  any_owner: number;
  /** JSON list of the workspaces the batch could name when not any; null: the signing workspace only. */
  owners: string | null;
  /** Events accepted from the batch. */
  events: number;
  /** The instance that journaled the batch (its sweep finds batches it never counted). */
  instance_id: string;
  body: Buffer;
  /** Random token of the row; with the seq, the key Redis marks the batch counted under (null: rows of earlier builds, keyed by seq). */
  batch_key: string | null;
}

/** The one row naming the deployment and epoch the Redis statistics must be bound to. */
export interface VodStatsBindingTable {
  name: string;
  deployment_id: string;
  epoch: number;
  created_at: number;
}

export interface VodStatsJournalTables {
  vod_stats_journal: VodStatsJournalTable;
  vod_stats_binding: VodStatsBindingTable;
}

// The module adds its tables to the database's type itself, so platform/db names no module.
declare module '../../../platform/db/schema.js' {
  interface Database extends VodStatsJournalTables {}
}
