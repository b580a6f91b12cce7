import type { DeliveriesView, SettingsView, TestResultView } from './error-reporting.schema.js';
import type { CallbackSettings, CallbackTestResult, DeliveriesReport } from './error-reporting.service.js';
import { observationView } from './error-reporting.service.js';

const settingsPath = '/api/v4/error-reporting/settings';

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
