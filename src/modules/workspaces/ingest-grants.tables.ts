/**
 * Workspace `workspace_id` lets the ingest keys of workspace `grantee_id` submit playback events
 * for it (a playback server's workspace serving several customers' content).
 */
export interface IngestGrantTable {
  workspace_id: string;
  grantee_id: string;
  created_at: number;
}

export interface IngestGrantTables {
  ingest_grants: IngestGrantTable;
}

// The module adds its tables to the database's type itself, so platform/db names no module.
declare module '../../platform/db/schema.js' {
  interface Database extends IngestGrantTables {}
}
