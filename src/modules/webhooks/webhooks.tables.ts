/** A workspace's endpoint subscribed to operational events. */
export interface WebhookSubscriptionTable {
  /** `whs_` + 32 hex. */
  id: string;
  workspace_id: string;
  url: string;
  /** JSON array of the event types it receives (operationalEventTypes). */
  event_types: string;
  description: string;
  /** 0/1: a disabled subscription gets no new deliveries (those pending still go). */
  enabled: number;
  /** The signing secret (`whsec_…`), sealed with the server key; shown once, at creation or rotation. */
  secret_sealed: string;
  /** The secret replaced by the last rotation; still signs until `previous_secret_expires_at`. */
  previous_secret_sealed: string | null;
  previous_secret_expires_at: number | null;
  created_at: number;
  updated_at: number;
}

/**
 * One event on its way to one subscription, until it is delivered or its retries are used up.
 * The next attempt's time is here, so a restart between attempts loses nothing; an instance
 * claims an attempt under a lease (cluster mode: one instance sends a given attempt).
 */
export interface WebhookDeliveryTable {
  /** `whd_` + 12 hex digits of the enqueue time in ms + 20 random hex digits. */
  id: string;
  workspace_id: string;
  subscription_id: string;
  /** The `webhook-id` (`msg_…`): the same for every attempt and every resend of this event. */
  event_id: string;
  event_type: string;
  /** The exact body every attempt sends. */
  body: string;
  /** Attempts made so far. */
  attempts: number;
  /** Unix ms when the next attempt is due. */
  next_attempt_at: number;
  lease_owner: string | null;
  lease_expires_at: number | null;
  created_at: number;
}

export interface WebhookTables {
  webhook_subscriptions: WebhookSubscriptionTable;
  webhook_deliveries: WebhookDeliveryTable;
}

declare module '../../platform/db/schema.js' {
  interface Database extends WebhookTables {}
}
