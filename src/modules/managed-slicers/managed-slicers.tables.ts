import type { Generated } from 'kysely';

/** A managed slicer. Times are Unix milliseconds. */
export interface ManagedSlicerTable {
  id: string;
  workspace_id: string;
  name: string;
  description: string | null;
  region: string;
  ingest_protocol: string;
  output_profile: string;
  /** Seconds of DVR window; null for slicers made before it (they take PLAYLINE_LIVE_DVR_WINDOW_S). */
  dvr_window_s: number | null;
  /** Records live events into the library; null for slicers made before it (they do). SQLite stores 0/1. */
  record: boolean | number | null;
  /** Derived from the slicer's tasks, rewritten with every task change (see deriveSlicerState). */
  state: string;
  /** Without the stream key: the view adds it (stream-key.ts). */
  ingest_url: string | null;
  /** The stream key sealed by the SecretBox; null for slicers made before stream keys until first needed. */
  stream_key_sealed: string | null;
  latest_task_id: string;
  created_at: number;
  updated_at: number;
  /** The instance running the slicer's process (ffmpeg provisioner), and until when unrenewed. */
  host_owner: string | null;
  host_expires_at: number | null;
  /** JSON of the LiveStatus that instance last wrote. */
  live_status: string | null;
}

/** A slicer task; `seq` is the enqueue order (per slicer execution order, newest-first lists). */
export interface ManagedSlicerTaskTable {
  seq: Generated<number>;
  id: string;
  workspace_id: string;
  slicer_id: string;
  operation: string;
  state: string;
  /** JSON of the SlicerConfig the task converges the slicer to. */
  config: string;
  created_at: number;
  updated_at: number;
  started_at: number | null;
  finished_at: number | null;
  failure_reason: string | null;
  lease_owner: string | null;
  lease_expires_at: number | null;
  attempts: number;
}

export interface ManagedSlicerTables {
  managed_slicers: ManagedSlicerTable;
  managed_slicer_tasks: ManagedSlicerTaskTable;
}

// The module adds its tables to the database's type itself, so platform/db names no module.
declare module '../../platform/db/schema.js' {
  interface Database extends ManagedSlicerTables {}
}
