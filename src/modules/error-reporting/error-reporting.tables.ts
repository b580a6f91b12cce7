import type { AttemptLogTables, DeliveryAttemptTable } from '../../platform/outbound/attempt-log.tables.js';

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

/** The shared delivery attempt log lives with the outbound delivery machinery (platform/outbound). */
export type ErrorReportDeliveryTable = DeliveryAttemptTable;

export interface ErrorReportingTables extends AttemptLogTables {
  error_reporting_settings: ErrorReportingSettingsTable;
}

// The module adds its tables to the database's type itself, so platform/db names no module.
declare module '../../platform/db/schema.js' {
  interface Database extends ErrorReportingTables {}
}
