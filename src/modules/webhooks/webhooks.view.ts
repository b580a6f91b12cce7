import { operationalEventTypes, type OperationalEventType } from '../../platform/operational-events.js';
import type { LoggedOutcomeKind } from '../../platform/outbound/delivery-outcome.js';
import type { AttemptRow, AttemptSummaryRow, SubscriptionRow } from './webhooks.repository.js';
import type {
  SubscriptionView, WebhookAttemptCollectionView, WebhookAttemptDetailView, WebhookAttemptView,
} from './webhooks.schema.js';

export const SUBSCRIPTIONS_PATH = '/api/v4/webhooks/subscriptions';
export const ATTEMPTS_PATH = '/api/v4/webhooks/attempts';

const isoMicros = (ms: number): string => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

/** The event types a subscription row holds (unknown names, from a newer version, left out). */
export const subscribedTypes = (row: Pick<SubscriptionRow, 'event_types'>): OperationalEventType[] => {
  const parsed: unknown = JSON.parse(row.event_types);
  return Array.isArray(parsed) ? operationalEventTypes.filter((t) => parsed.includes(t)) : [];
};

export const subscriptionView = (row: SubscriptionRow, pending: number, now: number): SubscriptionView => ({
  '@id': `${SUBSCRIPTIONS_PATH}/${row.id}`,
  '@type': 'WebhookSubscription',
  id: row.id,
  url: row.url,
  event_types: subscribedTypes(row),
  description: row.description,
  enabled: row.enabled === 1,
  pending_deliveries: pending,
  previous_signing_secret_expires_at: row.previous_secret_sealed !== null && (row.previous_secret_expires_at ?? 0) > now ? row.previous_secret_expires_at : null,
  created_at: row.created_at,
  updated_at: row.updated_at,
});

export const attemptView = (row: AttemptSummaryRow): WebhookAttemptView => ({
  '@id': `${ATTEMPTS_PATH}/${row.id}`,
  '@type': 'WebhookAttempt',
  id: row.id,
  subscription_id: row.subscription_id ?? '',
  ts: row.at,
  ts_iso: isoMicros(row.at),
  webhook_id: row.webhook_id,
  url: row.url,
  outcome: row.outcome as LoggedOutcomeKind,
  status: row.status,
  latency_ms: row.latency_ms,
  detail: row.detail,
  resend_of: row.resend_of,
});

export const attemptDetailView = (row: AttemptRow): WebhookAttemptDetailView => ({
  ...attemptView(row),
  event: JSON.parse(row.body) as WebhookAttemptDetailView['event'],
  request: { body: row.body, headers: JSON.parse(row.headers) as WebhookAttemptDetailView['request']['headers'] },
});

export const attemptCollectionView = (selfPath: string, rows: AttemptSummaryRow[], total: number, nextCursor: string | undefined): WebhookAttemptCollectionView => ({
  '@id': selfPath,
  '@type': 'Collection',
  items: rows.map(attemptView),
  total_items: total,
  next_cursor: nextCursor ?? null,
});
