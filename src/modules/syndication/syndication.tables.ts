/**
 * Tables of the syndication module. Secrets never have a column of their own: they live
 * sealed (AES-256-GCM, the platform's secret box) in `secrets_sealed`, and `platform_config`
 * holds only the public keys.
 */
export interface SyndicationTargetTable {
  id: string;
  workspace_id: string;
  description: string;
  platform: string;
  target_protocol: string;
  /** JSON of the public platform_config keys (password and stream_id are in secrets_sealed). */
  platform_config: string;
  /** Sealed JSON of target_stream, password and stream_id. */
  secrets_sealed: string;
  /** Comma-separated names of the secrets that are set (so responses mask without decrypting). */
  secret_fields: string;
  /** The generated pull URL of a Custom hls target, once a schedule has started. */
  pull_url: string | null;
  created_at: number;
  updated_at: number;
}

export interface SyndicationScheduleTable {
  id: string;
  workspace_id: string;
  target_id: string;
  content_id: string;
  content_type: string;
  region: string;
  scte35_enabled: number;
  source_url_params: string;
  /** active | stopped | error */
  status: string;
  /** Why publishing failed, while status is error. */
  error: string | null;
  /** Cluster mode: the instance running the push of a started schedule (null embedded, or stopped). */
  publisher_instance?: string | null;
  created_at: number;
  updated_at: number;
}

export interface SyndicationClippingProfileTable {
  id: string;
  workspace_id: string;
  description: string;
  /** JSON array of { service, account }. */
  integrations: string;
  created_at: number;
}

// A type alias (not an interface) so Kysely's `withTables<SyndicationTables>()` accepts it.
export type SyndicationTables = {
  syndication_targets: SyndicationTargetTable;
  syndication_schedules: SyndicationScheduleTable;
  syndication_clipping_profiles: SyndicationClippingProfileTable;
};

// The module adds its tables to the database's type itself, so platform/db names no module.
declare module '../../platform/db/schema.js' {
  interface Database extends SyndicationTables {}
}
