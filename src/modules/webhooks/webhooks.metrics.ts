import { Counter } from 'prom-client';
import type { Registry } from 'prom-client';
import { deliveryOutcomeKinds, type DeliveryOutcomeKind } from '../../platform/outbound/delivery-outcome.js';
import { operationalEventTypes, type OperationalEventType } from '../../platform/operational-events.js';

/** Why a webhook delivery ended without being delivered. */
export const webhookGiveUpReasons = ['exhausted', 'overflow', 'subscription_gone'] as const;
export type WebhookGiveUpReason = (typeof webhookGiveUpReasons)[number];

/** What the webhooks module counts (no workspace label: the delivery log has the per-workspace detail). */
export interface WebhookMetrics {
  /** One delivery of an event to one subscription was stored. */
  enqueued(type: OperationalEventType): void;
  /** An attempt ended with this outcome (resends included). */
  attempted(outcome: DeliveryOutcomeKind): void;
  /** A failed attempt was given another one later. */
  retryScheduled(): void;
  /** A delivery ended undelivered. */
  gaveUp(reason: WebhookGiveUpReason): void;
  /** An event could not be stored (a database failure): nobody will receive it. */
  lost(): void;
}

export const registerWebhookMetrics = (registry: Registry): WebhookMetrics => {
  const events = new Counter({
    name: 'playline_webhook_deliveries_enqueued_total',
    help: 'Operational event deliveries stored (one per event and subscribed endpoint), by event type',
    labelNames: ['type'] as const,
    registers: [registry],
  });
  const attempts = new Counter({
    name: 'playline_webhook_attempts_total',
    help: 'Operational event webhook attempts (resends included), by outcome',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const retries = new Counter({
    name: 'playline_webhook_retries_scheduled_total',
    help: 'Failed webhook attempts given another attempt later (schedule: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h)',
    registers: [registry],
  });
  const failed = new Counter({
    name: 'playline_webhook_failed_total',
    help: 'Webhook deliveries ended undelivered, by reason: exhausted (7 attempts failed), overflow (oldest pending dropped at PLAYLINE_WEBHOOK_MAX_PENDING), subscription_gone',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const lost = new Counter({
    name: 'playline_webhook_events_lost_total',
    help: 'Operational events that could not be stored for delivery (a database failure; logged)',
    registers: [registry],
  });
  // Every label at zero from the start, so rates and alerts see the series before the first event.
  for (const type of operationalEventTypes) events.inc({ type }, 0);
  for (const outcome of deliveryOutcomeKinds) attempts.inc({ outcome }, 0);
  for (const reason of webhookGiveUpReasons) failed.inc({ reason }, 0);
  return {
    enqueued: (type) => events.inc({ type }),
    attempted: (outcome) => attempts.inc({ outcome }),
    retryScheduled: () => retries.inc(),
    gaveUp: (reason) => failed.inc({ reason }),
    lost: () => lost.inc(),
  };
};
