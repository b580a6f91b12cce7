/** One row per workspace that has touched its Error Reporting settings. */
export interface ErrorReportingSettingsTable {
  workspace_id: string;
  callback_url: string | null;
  /** 0/1 */
  enabled: number;
  /** The current signing secret (`whsec_…`), sealed with the server key. */
  secret_sealed: string;
  /** The secret replaced by the last rotation; still signs until `previous_secret_expires_at`. */
  previous_secret_sealed: string | null;
  previous_secret_expires_at: number | null;
  /** Bumped by every change; other instances compare it to pick up changes. */
  revision: number;
  updated_at: number;
}

/** One callback delivery attempt (the persistent delivery log), kept for the retention period. */
export interface ErrorReportDeliveryTable {
  /** `att_<hex>`. */
  id: string;
  workspace_id: string;
  /** The `webhook-id` sent (a resend keeps the report's id, as Standard Webhooks asks). */
  webhook_id: string;
  url: string;
  /** Unix ms when the attempt ended. */
  at: number;
  outcome: string;
  status: number | null;
  latency_ms: number;
  detail: string | null;
  /** The exact body sent. */
  body: string;
  /** JSON of the signature headers sent (webhook-id, webhook-timestamp, webhook-signature). */
  headers: string;
  /** The attempt this one resent, or null for a delivery of a new report. */
  resend_of: string | null;
  /**
   * The webhook subscription an operational event was sent to (src/modules/webhooks), or null
   * for an Error Report: both kinds share this log, its retention and its sweep.
   */
  subscription_id: string | null;
}

export interface ErrorReportingTables {
  error_reporting_settings: ErrorReportingSettingsTable;
  error_report_deliveries: ErrorReportDeliveryTable;
}

// The module adds its tables to the database's type itself, so platform/db names no module.
declare module '../../platform/db/schema.js' {
  interface Database extends ErrorReportingTables {}
}
