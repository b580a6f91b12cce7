import type {
  DeliveriesView, LoggedAttemptCollectionView, LoggedAttemptDetailView, LoggedAttemptQueryInput, PutSettingsInput, SettingsView, TestResultView,
} from '../modules/error-reporting/error-reporting.schema.js';
import type { ClientCore } from './client.js';

/** Error Reporting: the callback URL (saved only after it passes a test POST), its signing secret, deliveries. */
export class ErrorReportingApi {
  constructor(private readonly core: ClientCore) {}

  /** The callback settings and the signing secret (created on first use). */
  getSettings(): Promise<SettingsView> {
    return this.core.request<SettingsView>('GET', '/api/v4/error-reporting/settings');
  }

  /** Saves the callback URL if a signed test POST to it answers 200 within 5 s; else throws a 422 PlaylineApiError whose body has `observed`. */
  putSettings(settings: PutSettingsInput): Promise<SettingsView> {
    return this.core.request<SettingsView>('PUT', '/api/v4/error-reporting/settings', { body: settings });
  }

  /** Removes the callback URL; the signing secret is kept. */
  deleteSettings(): Promise<SettingsView> {
    return this.core.request<SettingsView>('DELETE', '/api/v4/error-reporting/settings');
  }

  /** Replaces the signing secret; the old one keeps signing for 24 hours. */
  rotateSecret(): Promise<SettingsView> {
    return this.core.request<SettingsView>('POST', '/api/v4/error-reporting/settings/rotate-secret');
  }

  /** POSTs a signed sample report to `callbackUrl` (default: the saved one) and returns what was observed. */
  test(callbackUrl?: string): Promise<TestResultView> {
    return this.core.request<TestResultView>('POST', '/api/v4/error-reporting/test', {
      body: callbackUrl === undefined ? {} : { callback_url: callbackUrl },
    });
  }

  /** Recent attempts, counters and the endpoint's pause state. */
  deliveries(): Promise<DeliveriesView> {
    return this.core.request<DeliveriesView>('GET', '/api/v4/error-reporting/deliveries');
  }

  /** The delivery log (every instance's attempts, and the reports dropped unsent as outcome `dropped`), newest first; `next_cursor` continues it. */
  listAttempts(query: LoggedAttemptQueryInput = {}): Promise<LoggedAttemptCollectionView> {
    return this.core.request<LoggedAttemptCollectionView>('GET', '/api/v4/error-reporting/attempts', { query: { ...query } });
  }

  /** One logged attempt with its payload, exact body and signature headers. */
  getAttempt(attemptId: string): Promise<LoggedAttemptDetailView> {
    return this.core.request<LoggedAttemptDetailView>('GET', `/api/v4/error-reporting/attempts/${encodeURIComponent(attemptId)}`);
  }

  /** Sends a logged report (a dropped one too) again to the current callback (signed anew) and returns the new attempt and its outcome. */
  resend(attemptId: string): Promise<LoggedAttemptDetailView> {
    return this.core.request<LoggedAttemptDetailView>('POST', `/api/v4/error-reporting/attempts/${encodeURIComponent(attemptId)}/resend`);
  }

  /** Ends the callback endpoint's pause now; returns the deliveries summary (paused_until null). */
  resume(): Promise<DeliveriesView> {
    return this.core.request<DeliveriesView>('POST', '/api/v4/error-reporting/settings/resume');
  }
}
