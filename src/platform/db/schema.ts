/**
 * Table types for Kysely. Each module declares its tables in its own `*.tables.ts` and adds
 * them to `Database` there, by augmenting this file's interface (`declare module`). Times are
 * Unix milliseconds in bigint columns; booleans are 0/1 integers; JSON is text (portable to
 * SQLite and PostgreSQL alike).
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

/** Every table: the foundation's here, each module's added by its `*.tables.ts`. */
export interface Database extends FoundationTables {}
