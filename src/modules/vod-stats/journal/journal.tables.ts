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
}

export interface VodStatsJournalTables {
  vod_stats_journal: VodStatsJournalTable;
}
