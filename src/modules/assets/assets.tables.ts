/** An asset of the media library. Times are Unix milliseconds. */
export interface AssetTable {
  id: string;
  workspace_id: string;
  title: string | null;
  /** uploaded, processing, playable, ready or failed. */
  state: string;
  /** Whole percent of packaging done (0-100). */
  progress: number;
  size_bytes: number;
  /** Bytes the asset keeps on disk (its workspace's storage quota): the upload, then the packaged output; 0 once failed. */
  stored_bytes: number;
  /** Packaged duration in milliseconds: so far while playable, the whole once ready. */
  duration_ms: number | null;
  /** JSON array of the renditions' name, width, height and bandwidth (playable and ready). */
  renditions: string | null;
  failure_reason: string | null;
  /** The slicer a recorded live event came from; null for uploads. */
  source_slicer_id: string | null;
  /** The recorded event's start and end (Unix ms); null for uploads. */
  recording_started_at: number | null;
  recording_ended_at: number | null;
  created_at: number;
  updated_at: number;
}

/**
 * The packaging job of an asset, present from upload until the asset is ready or failed. A job
 * is queued while it holds no lease (or an expired one) and running while an instance holds it.
 */
export interface AssetJobTable {
  asset_id: string;
  workspace_id: string;
  queued_at: number;
  lease_owner: string | null;
  lease_expires_at: number | null;
  /** How many times the job was claimed; doubles as the lease's fencing token. */
  attempts: number;
}

/** A workspace's place in the packaging round-robin: the claim counter at its last claim (the lowest goes next). */
export interface AssetClaimTurnTable {
  workspace_id: string;
  turn: number;
}

export interface AssetTables {
  assets: AssetTable;
  asset_jobs: AssetJobTable;
  asset_claim_turns: AssetClaimTurnTable;
}

// The module adds its tables to the database's type itself, so platform/db names no module.
declare module '../../platform/db/schema.js' {
  interface Database extends AssetTables {}
}
