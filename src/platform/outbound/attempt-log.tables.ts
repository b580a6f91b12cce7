/**
 * One outbound delivery attempt (the persistent attempt log), kept for the retention period. Error
 * Reports and operational webhooks both write here; the table keeps the name Error Reporting gave it
 * (its migration creates it), while the row shape belongs to the delivery layer both policies share.
 */
export interface DeliveryAttemptTable {
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
export interface AttemptLogTables {
  error_report_deliveries: DeliveryAttemptTable;
}

// The delivery layer adds its table to the database's type itself.
declare module '../db/schema.js' {
  interface Database extends AttemptLogTables {}
}
