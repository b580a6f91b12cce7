import type { DeliveryRow, DeliverySummaryRow } from '../../platform/outbound/attempt-log.repository.js';
import { isDropReason } from './delivery-log.js';
import type { LoggedOutcomeKind } from '../../platform/outbound/delivery-outcome.js';
import type {
  DeliveriesView, LoggedAttemptCollectionView, LoggedAttemptDetailView, LoggedAttemptView, SettingsView, TestResultView,
} from './error-reporting.schema.js';
import type { CallbackSettings, CallbackTestResult, DeliveriesReport } from './error-reporting.service.js';
import { observationView } from './error-reporting.service.js';

const settingsPath = '/api/v4/error-reporting/settings';
export const attemptsPath = '/api/v4/error-reporting/attempts';

/** `2026-11-21T10:04:05.123000Z`: UTC with microseconds, as every ts_iso of the API. */
const isoMicros = (ms: number): string => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

export const settingsView = (s: CallbackSettings): SettingsView => ({
  '@id': settingsPath,
  '@type': 'ErrorReportingSettings',
  owner: s.owner,
  callback_url: s.callbackUrl,
  enabled: s.enabled,
  signing_secret: s.signingSecret,
  previous_signing_secret_expires_at: s.previousSecretExpiresAt,
  updated_at: s.updatedAt,
});

export const testResultView = (r: CallbackTestResult): TestResultView => ({
  '@id': '/api/v4/error-reporting/test',
  '@type': 'CallbackTest',
  callback_url: r.url,
  passed: r.passed,
  observed: observationView(r.observed),
});

export const deliveriesView = (d: DeliveriesReport): DeliveriesView => ({
  '@id': '/api/v4/error-reporting/deliveries',
  '@type': 'ErrorReportDeliveries',
  callback_url: d.settings.callbackUrl,
  enabled: d.settings.enabled,
  counters: d.counters,
  endpoint: d.endpoint
    ? {
        paused_until: d.endpoint.pausedUntil,
        queued: d.endpoint.queued,
        in_flight: d.endpoint.inFlight,
        consecutive_failures: d.endpoint.consecutiveFailures,
      }
    : null,
  recent: d.recent.map((a) => ({
    ts: a.at,
    ts_iso: isoMicros(a.at),
    webhook_id: a.webhookId,
    url: a.url,
    outcome: a.outcome,
    status: a.status,
    latency_ms: a.latencyMs,
    ...(a.detail !== undefined ? { detail: a.detail } : {}),
  })),
});

export const loggedAttemptView = (row: DeliverySummaryRow): LoggedAttemptView => ({
  '@id': `${attemptsPath}/${row.id}`,
  '@type': 'DeliveryAttempt',
  id: row.id,
  ts: row.at,
  ts_iso: isoMicros(row.at),
  webhook_id: row.webhook_id,
  url: row.url,
  outcome: row.outcome as LoggedOutcomeKind,
  // A dropped report's reason is its detail.
  drop_reason: row.outcome === 'dropped' && isDropReason(row.detail) ? row.detail : null,
  status: row.status,
  latency_ms: row.latency_ms,
  detail: row.detail,
  resend_of: row.resend_of,
});

export const loggedAttemptDetailView = (row: DeliveryRow): LoggedAttemptDetailView => {
  const headers = JSON.parse(row.headers) as LoggedAttemptDetailView['request']['headers'];
  return {
    ...loggedAttemptView(row),
    payload: JSON.parse(row.body) as LoggedAttemptDetailView['payload'],
    request: { body: row.body, headers },
  };
};

export const loggedAttemptCollectionView = (selfPath: string, rows: DeliverySummaryRow[], total: number, nextCursor: string | undefined): LoggedAttemptCollectionView => ({
  '@id': selfPath,
  '@type': 'Collection',
  items: rows.map(loggedAttemptView),
  total_items: total,
  next_cursor: nextCursor ?? null,
});
