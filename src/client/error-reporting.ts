import type {
  DeliveriesView, PutSettingsInput, SettingsView, TestResultView,
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
}
