import type { ErrorReportingTables } from '../../modules/error-reporting/error-reporting.tables.js';
import type { ManagedSlicerTables } from '../../modules/managed-slicers/managed-slicers.tables.js';
import type { SyndicationTables } from '../../modules/syndication/syndication.tables.js';
import type { PlaybackEdgeTables } from '../../modules/playback-edge/playback-edge.tables.js';
import type { VodStatsJournalTables } from '../../modules/vod-stats/journal/journal.tables.js';
import type { AssetTables } from '../../modules/assets/assets.tables.js';
import type { IngestGrantTables } from '../../modules/workspaces/ingest-grants.tables.js';

/**
 * Table types for Kysely. Each module declares its tables in its own `*.tables.ts` and adds
 * them to `Database` with `extends`. Times are Unix milliseconds in bigint columns; booleans
 * are 0/1 integers; JSON is text (portable to SQLite and PostgreSQL alike).
 */
export interface WorkspaceTable {
  id: string;
  name: string;
  created_at: number;
}

export interface ApiKeyTable {
  id: string;
  workspace_id: string;
  /** 'api' (calls the owner's API) or 'ingest' (submits events for its workspace and those that granted it, nothing else). */
  kind: string;
  label: string;
  /** First characters of the secret, to recognise a key in listings. */
  prefix: string;
  secret_sealed: string;
  created_at: number;
  revoked_at: number | null;
}

/** One fact about the deployment, by name (`secret_key_check`; `write_probe:<id>` rows live for one probe). */
export interface DeploymentCheckTable {
  name: string;
  value: string;
  created_at: number;
}

export interface FoundationTables {
  workspaces: WorkspaceTable;
  api_keys: ApiKeyTable;
  deployment_checks: DeploymentCheckTable;
}

export interface Database extends FoundationTables, ErrorReportingTables, ManagedSlicerTables, PlaybackEdgeTables, SyndicationTables, VodStatsJournalTables, IngestGrantTables, AssetTables {}
export interface Database extends FoundationTables, IngestGrantTables, ErrorReportingTables, ManagedSlicerTables, PlaybackEdgeTables, SyndicationTables, VodStatsJournalTables {}
