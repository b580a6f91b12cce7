import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import { AppError } from '../../platform/errors.js';
import { decodeTimeIdCursor, encodeCursor } from '../../platform/http/cursor.js';
import type { IdGenerator } from '../../platform/ids.js';
import type { SecretBox } from '../../platform/secret-box.js';
import type { CallbackObservation, CallbackTester } from '../../platform/outbound/delivery-client.js';
import type { CallbackDispatcher, EndpointState } from './callback-dispatcher.js';
import type { DeliveryAttempt, DeliveryCounters } from './delivery-log.js';
import type { DeliveryLogStore } from './delivery-log-store.js';
import * as deliveryRepo from '../../platform/outbound/attempt-log.repository.js';
import type { LoggedOutcomeKind } from '../../platform/outbound/delivery-outcome.js';
import { sampleReport } from './error-report.js';
import * as repo from './error-reporting.repository.js';
import { generateSigningSecret, WebhookSigner } from '../../platform/outbound/webhook-signature.js';

/** A workspace's Error Reporting settings, secrets opened. */
export interface CallbackSettings {
  owner: string;
  callbackUrl: string | null;
  enabled: boolean;
  signingSecret: string;
  /** The secret replaced by the last rotation, while it still signs. */
  previousSecret: string | null;
  previousSecretExpiresAt: number | null;
  updatedAt: number;
  revision: number;
}

export interface CallbackTestResult {
  url: string;
  passed: boolean;
  observed: CallbackObservation;
}

export interface DeliveriesReport {
  settings: CallbackSettings;
  counters: DeliveryCounters;
  endpoint: EndpointState | undefined;
  recent: DeliveryAttempt[];
}

/** A page of the persistent delivery log. */
export interface LoggedAttemptPage {
  items: deliveryRepo.DeliverySummaryRow[];
  total: number;
  nextCursor: string | undefined;
}

export interface LoggedAttemptQuery {
  outcome?: LoggedOutcomeKind | undefined;
  limit?: number | undefined;
  cursor?: string | undefined;
}

/** Applies a changed settings row to this instance's dispatcher at once (the route sync). */
export interface CallbackRouteUpdater {
  apply(settings: CallbackSettings): void;
}

export interface ErrorReportingServiceDeps {
  db: Db;
  box: SecretBox;
  clock: Clock;
  ids: IdGenerator;
  tester: CallbackTester;
  dispatcher: CallbackDispatcher;
  routes: CallbackRouteUpdater;
  deliveryLog: DeliveryLogStore;
  /** How long a rotated-out secret keeps signing alongside the new one. Default 24 h. */
  rotationGraceMs?: number;
}

/** Opens a settings row (secrets decrypted; an expired previous secret is left out). */
export const settingsFromRow = (row: repo.SettingsRow, box: SecretBox, now: number): CallbackSettings => {
  const previousLive = row.previous_secret_sealed !== null && (row.previous_secret_expires_at ?? 0) > now;
  return {
    owner: row.workspace_id,
    callbackUrl: row.callback_url,
    enabled: row.enabled === 1,
    signingSecret: box.open(row.secret_sealed),
    previousSecret: previousLive && row.previous_secret_sealed ? box.open(row.previous_secret_sealed) : null,
    previousSecretExpiresAt: previousLive ? row.previous_secret_expires_at : null,
    updatedAt: row.updated_at,
    revision: Number(row.revision),
  };
};

export const signerFor = (settings: CallbackSettings): WebhookSigner =>
  new WebhookSigner(settings.previousSecret ? [settings.signingSecret, settings.previousSecret] : [settings.signingSecret]);

/** Settings, the test-before-save, secret rotation and delivery visibility of Error Reporting. */
export class ErrorReportingService {
  private readonly rotationGraceMs: number;

  constructor(private readonly deps: ErrorReportingServiceDeps) {
    this.rotationGraceMs = deps.rotationGraceMs ?? 24 * 60 * 60 * 1000;
  }

  /** The workspace's settings; the first call creates its signing secret. */
  async getSettings(owner: string): Promise<CallbackSettings> {
    const { db, box, clock } = this.deps;
    const existing = await repo.findSettings(db, owner);
    if (existing) return settingsFromRow(existing, box, clock.now());
    await repo.insertSettingsIfAbsent(db, {
      workspace_id: owner,
      callback_url: null,
      enabled: 0,
      secret_sealed: box.seal(generateSigningSecret()),
      previous_secret_sealed: null,
      previous_secret_expires_at: null,
      revision: 1,
      updated_at: clock.now(),
    });
    return this.reload(owner);
  }

  /** Saves the callback only after the test POST to it answered 200; otherwise throws and saves nothing. */
  async saveSettings(owner: string, input: { callbackUrl: string; enabled: boolean }): Promise<CallbackSettings> {
    const result = await this.testCallback(owner, input.callbackUrl);
    if (!result.passed) throw testFailure(result);
    await repo.updateCallback(this.deps.db, owner, {
      callback_url: input.callbackUrl,
      enabled: input.enabled ? 1 : 0,
      updated_at: this.deps.clock.now(),
    });
    return this.applied(owner);
  }

  /** Removes the callback (the signing secret stays, so a later URL keeps the receiver's secret). */
  async clearSettings(owner: string): Promise<CallbackSettings> {
    await this.getSettings(owner);
    await repo.updateCallback(this.deps.db, owner, { callback_url: null, enabled: 0, updated_at: this.deps.clock.now() });
    return this.applied(owner);
  }

  /** POSTs a signed sample report to `url` (default: the saved callback) and reports what happened. */
  async testCallback(owner: string, url?: string): Promise<CallbackTestResult> {
    const settings = await this.getSettings(owner);
    const target = url ?? settings.callbackUrl;
    if (!target) throw new AppError('callback_not_configured', 'Give callback_url, or save one with PUT /api/v4/error-reporting/settings first');
    const body = JSON.stringify(sampleReport(owner, this.deps.clock.now()));
    const id = `msg_test_${this.deps.ids.hex()}`;
    const headers = signerFor(settings).sign(id, this.deps.clock.now() / 1000, body);
    const observed = await this.deps.tester.testCallback(target, { body, headers: { ...headers } });
    if (observed.refusal === 'invalid_url' || observed.refusal === 'unsupported_scheme') {
      throw new AppError('validation_failed', `callback_url ${observed.detail ?? 'is not allowed'}`, {
        errors: [{ path: '/callback_url', message: observed.detail ?? 'must be an http or https URL' }],
      });
    }
    const passed = observed.outcome === 'delivered';
    // A passing test of the saved callback shows the endpoint answers again: its pause ends now.
    if (passed && target === settings.callbackUrl) this.deps.dispatcher.resume(owner);
    return { url: target, passed, observed };
  }

  /** A new signing secret; the previous one keeps signing for the grace period so receivers can switch. */
  async rotateSecret(owner: string): Promise<CallbackSettings> {
    const { db, box, clock } = this.deps;
    const current = await this.getSettings(owner);
    await repo.updateSecrets(db, owner, {
      secret_sealed: box.seal(generateSigningSecret()),
      previous_secret_sealed: box.seal(current.signingSecret),
      previous_secret_expires_at: clock.now() + this.rotationGraceMs,
      updated_at: clock.now(),
    });
    return this.applied(owner);
  }

  async deliveries(owner: string): Promise<DeliveriesReport> {
    const settings = await this.getSettings(owner);
    const { counters, recent, endpoint } = this.deps.dispatcher.deliveries(owner);
    return { settings, counters, recent, endpoint };
  }

  /** The workspace's logged attempts (every instance's), newest first, a page at a time. */
  async listAttempts(owner: string, query: LoggedAttemptQuery): Promise<LoggedAttemptPage> {
    // This instance's attempts still queued for the log are written first: a list shows them.
    await this.deps.deliveryLog.flushForRead();
    const limit = query.limit ?? 50;
    const after = query.cursor === undefined ? undefined : decodeDeliveryCursor(query.cursor);
    const { rows, total } = await deliveryRepo.listDeliveries(this.deps.db, owner, { outcome: query.outcome }, limit + 1, after);
    const items = rows.slice(0, limit);
    const last = items.at(-1);
    const nextCursor = rows.length > limit && last ? encodeCursor([last.at, last.id]) : undefined;
    return { items, total, nextCursor };
  }

  /** One logged attempt with the exact body and the signature headers sent. */
  async getAttempt(owner: string, attemptId: string): Promise<deliveryRepo.DeliveryRow> {
    await this.deps.deliveryLog.flushForRead();
    const row = await deliveryRepo.findDelivery(this.deps.db, owner, attemptId);
    if (!row) throw new AppError('not_found', `No logged delivery attempt ${attemptId}`);
    return row;
  }

  /**
   * Sends a logged report again to the workspace's current callback: a new attempt, signed anew,
   * logged, best effort (no retry); returns it with its outcome.
   */
  async resend(owner: string, attemptId: string): Promise<deliveryRepo.DeliveryRow> {
    const original = await this.getAttempt(owner, attemptId);
    const sent = await this.deps.dispatcher.resend(owner, original.webhook_id, original.body);
    if (!sent) {
      throw new AppError('callback_not_configured', 'No enabled callback URL to resend to: save one with PUT /api/v4/error-reporting/settings first');
    }
    const row = this.deps.deliveryLog.rowOf(owner, sent.attempt, sent.request, original.id);
    await this.deps.deliveryLog.writeNow(row);
    return row;
  }

  /** Ends the pause of the workspace's callback endpoint at once (on every instance). */
  async resume(owner: string): Promise<DeliveriesReport> {
    const settings = await this.getSettings(owner);
    if (!this.deps.dispatcher.resume(owner)) {
      throw new AppError('callback_not_configured', 'No enabled callback URL: there is nothing to resume');
    }
    const { counters, recent, endpoint } = this.deps.dispatcher.deliveries(owner);
    return { settings, counters, recent, endpoint };
  }

  private async reload(owner: string): Promise<CallbackSettings> {
    const row = await repo.findSettings(this.deps.db, owner);
    // The workspace exists (the caller is authenticated as it) unless it was deleted meanwhile.
    if (!row) throw new AppError('not_found', `Workspace ${owner} has no Error Reporting settings`);
    return settingsFromRow(row, this.deps.box, this.deps.clock.now());
  }

  private async applied(owner: string): Promise<CallbackSettings> {
    const settings = await this.reload(owner);
    this.deps.routes.apply(settings);
    return settings;
  }
}

function decodeDeliveryCursor(cursor: string): deliveryRepo.DeliveryPosition {
  const { time, id } = decodeTimeIdCursor(cursor);
  return { at: time, id };
}

const testFailure = (result: CallbackTestResult): AppError => {
  const { observed } = result;
  const extra = { observed: observationView(observed) };
  if (observed.outcome === 'ssrf_refused') {
    return new AppError('callback_url_refused', `Not saved: ${observed.detail ?? 'the URL is not allowed'}`, { extra });
  }
  const what = observed.status !== null ? `answered HTTP ${observed.status}` : `failed (${observed.outcome}${observed.detail ? `: ${observed.detail}` : ''})`;
  return new AppError('callback_test_failed', `Not saved: the test POST to ${result.url} ${what}; it must answer 200`, { extra });
};

/** The API form of an observation (snake_case), shared by the 422 body and the test endpoint. */
export const observationView = (o: CallbackObservation) => ({
  outcome: o.outcome,
  status: o.status,
  latency_ms: o.latencyMs,
  ...(o.detail !== undefined ? { detail: o.detail } : {}),
  ...(o.address !== undefined ? { address: o.address } : {}),
  ...(o.responseExcerpt !== undefined ? { response_excerpt: o.responseExcerpt } : {}),
});
