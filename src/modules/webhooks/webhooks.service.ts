import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import { AppError } from '../../platform/errors.js';
import { decodeTimeIdCursor, encodeCursor } from '../../platform/http/cursor.js';
import type { IdGenerator } from '../../platform/ids.js';
import type { Outbound } from '../../platform/net/outbound.js';
import { lockWorkspace } from '../../platform/quota/workspace-quotas.js';
import type { SecretBox } from '../../platform/secret-box.js';
import type { CallbackTransport } from '../../platform/outbound/delivery-client.js';
import { generateSigningSecret } from '../../platform/outbound/webhook-signature.js';
import type { WebhookMetrics } from './webhooks.metrics.js';
import * as repo from './webhooks.repository.js';
import type { SubscriptionCreateInput, SubscriptionPatchInput, SubscriptionView, SubscriptionWithSecretView, WebhookAttemptQueryInput } from './webhooks.schema.js';
import { subscriptionView } from './webhooks.view.js';
import { subscriptionSigner, timeOrderedId } from './webhook-ids.js';

export interface WebhookServiceDeps {
  db: Db;
  box: SecretBox;
  clock: Clock;
  ids: IdGenerator;
  /** The outbound layer, whose guard checks a URL at save time (PLAYLINE_OUTBOUND_ALLOWLIST, private addresses refused). */
  outbound: Pick<Outbound, 'admitUrl'>;
  /** Sends a resend (the deliverer's transport). */
  transport: CallbackTransport;
  metrics: WebhookMetrics;
  /** Subscriptions per workspace (PLAYLINE_WEBHOOK_MAX_SUBSCRIPTIONS). */
  maxSubscriptions: number;
  /** How long a rotated-out secret keeps signing alongside the new one. Default 24 h. */
  rotationGraceMs?: number;
}

export interface AttemptPage {
  items: repo.AttemptSummaryRow[];
  total: number;
  nextCursor: string | undefined;
}

/** Subscriptions of a workspace's endpoints to operational events, and their delivery log. */
export class WebhookService {
  private readonly rotationGraceMs: number;

  constructor(private readonly deps: WebhookServiceDeps) {
    this.rotationGraceMs = deps.rotationGraceMs ?? 24 * 60 * 60 * 1000;
  }

  /** Creates a subscription within the workspace's cap; the answer is the only one with the secret. */
  async create(owner: string, input: SubscriptionCreateInput): Promise<SubscriptionWithSecretView> {
    const { db, box, clock, ids, maxSubscriptions } = this.deps;
    await this.admitUrl(input.url);
    const now = clock.now();
    const secret = generateSigningSecret();
    const row: repo.SubscriptionRow = {
      id: `whs_${ids.hex()}`,
      workspace_id: owner,
      url: input.url,
      event_types: JSON.stringify(input.event_types),
      description: input.description ?? '',
      enabled: input.enabled === false ? 0 : 1,
      secret_sealed: box.seal(secret),
      previous_secret_sealed: null,
      previous_secret_expires_at: null,
      created_at: now,
      updated_at: now,
    };
    await db.transaction().execute(async (trx) => {
      await lockWorkspace(trx, owner);
      const used = await repo.countSubscriptions(trx, owner);
      if (used >= maxSubscriptions) {
        throw new AppError('quota_exceeded', `This workspace holds ${used} of its ${maxSubscriptions} webhook subscriptions (PLAYLINE_WEBHOOK_MAX_SUBSCRIPTIONS): delete one before adding another`, {
          extra: { quota: 'webhook_subscriptions', limit: maxSubscriptions, used },
        });
      }
      await repo.insertSubscription(trx, row);
    });
    return { ...subscriptionView(row, 0, now), signing_secret: secret };
  }

  async list(owner: string): Promise<SubscriptionView[]> {
    const [rows, pending] = await Promise.all([repo.listSubscriptions(this.deps.db, owner), repo.pendingBySubscription(this.deps.db, owner)]);
    const now = this.deps.clock.now();
    return rows.map((row) => subscriptionView(row, pending.get(row.id) ?? 0, now));
  }

  async get(owner: string, id: string): Promise<SubscriptionView> {
    const row = await this.find(owner, id);
    return subscriptionView(row, await repo.countPending(this.deps.db, id), this.deps.clock.now());
  }

  async update(owner: string, id: string, patch: SubscriptionPatchInput): Promise<SubscriptionView> {
    await this.find(owner, id);
    if (patch.url !== undefined) await this.admitUrl(patch.url);
    const change = {
      ...(patch.url !== undefined ? { url: patch.url } : {}),
      ...(patch.event_types !== undefined ? { event_types: JSON.stringify(patch.event_types) } : {}),
      ...(patch.description !== undefined ? { description: patch.description } : {}),
      ...(patch.enabled !== undefined ? { enabled: patch.enabled ? 1 : 0 } : {}),
      updated_at: this.deps.clock.now(),
    };
    if (!(await repo.updateSubscription(this.deps.db, owner, id, change))) throw notFound(id);
    return this.get(owner, id);
  }

  /** Deletes the subscription and the deliveries still pending for it (its logged attempts stay). */
  async remove(owner: string, id: string): Promise<void> {
    if (!(await repo.deleteSubscription(this.deps.db, owner, id))) throw notFound(id);
  }

  /** A new signing secret, shown this once; the previous one keeps signing for the grace period. */
  async rotateSecret(owner: string, id: string): Promise<SubscriptionWithSecretView> {
    const { db, box, clock } = this.deps;
    const row = await this.find(owner, id);
    const secret = generateSigningSecret();
    const now = clock.now();
    await repo.updateSubscription(db, owner, id, {
      secret_sealed: box.seal(secret),
      previous_secret_sealed: row.secret_sealed,
      previous_secret_expires_at: now + this.rotationGraceMs,
      updated_at: now,
    });
    return { ...(await this.get(owner, id)), signing_secret: secret };
  }

  async listAttempts(owner: string, query: WebhookAttemptQueryInput): Promise<AttemptPage> {
    if (query.subscription_id !== undefined) await this.find(owner, query.subscription_id);
    const limit = query.limit ?? 50;
    let after: { at: number; id: string } | undefined;
    if (query.cursor !== undefined) {
      const { time, id } = decodeTimeIdCursor(query.cursor);
      after = { at: time, id };
    }
    const { rows, total } = await repo.listAttempts(this.deps.db, owner, { subscriptionId: query.subscription_id, outcome: query.outcome }, limit + 1, after);
    const items = rows.slice(0, limit);
    const last = items.at(-1);
    return { items, total, nextCursor: rows.length > limit && last ? encodeCursor([last.at, last.id]) : undefined };
  }

  async getAttempt(owner: string, attemptId: string): Promise<repo.AttemptRow> {
    const row = await repo.findAttempt(this.deps.db, owner, attemptId);
    if (!row) throw new AppError('not_found', `No logged webhook attempt ${attemptId}`);
    return row;
  }

  /**
   * Sends a logged event (a dropped one too) again, once and at once, to its subscription's
   * current URL: signed anew with the current secret, same webhook-id, logged as a new attempt
   * naming the original. Pending retries of the event are not changed.
   */
  async resend(owner: string, attemptId: string): Promise<repo.AttemptRow> {
    const { db, box, clock, ids, transport, metrics } = this.deps;
    const original = await this.getAttempt(owner, attemptId);
    const subscription = await repo.findSubscription(db, owner, original.subscription_id ?? '');
    if (!subscription) throw new AppError('not_found', `The subscription of attempt ${attemptId} was deleted: there is nowhere to resend it`);
    const headers = subscriptionSigner(subscription, box, clock.now()).sign(original.webhook_id, clock.now() / 1000, original.body);
    const outcome = await transport.deliver(subscription.url, { body: original.body, headers: { ...headers } });
    metrics.attempted(outcome.outcome);
    const row: repo.AttemptRow = {
      id: timeOrderedId('att_', clock, ids),
      workspace_id: owner,
      webhook_id: original.webhook_id,
      url: subscription.url,
      at: clock.now(),
      outcome: outcome.outcome,
      status: outcome.status,
      latency_ms: Math.max(0, Math.round(outcome.latencyMs)),
      detail: outcome.outcome === 'delivered' ? 'resend' : `resend: ${outcome.detail ?? outcome.outcome}`,
      body: original.body,
      headers: JSON.stringify(headers),
      resend_of: original.id,
      subscription_id: subscription.id,
    };
    await repo.insertAttempt(db, row);
    return row;
  }

  private async find(owner: string, id: string): Promise<repo.SubscriptionRow> {
    const row = await repo.findSubscription(this.deps.db, owner, id);
    if (!row) throw notFound(id);
    return row;
  }

  /** The outbound guard, at save time (delivery checks again, pinned): 400 for a malformed URL, 422 for a refused address. */
  private async admitUrl(url: string): Promise<void> {
    const checked = await this.deps.outbound.admitUrl(url);
    if (checked.ok) return;
    if (checked.reason === 'invalid_url' || checked.reason === 'unsupported_scheme') {
      throw new AppError('validation_failed', `url ${checked.detail}`, { errors: [{ path: '/url', message: checked.detail }] });
    }
    throw new AppError('callback_url_refused', `Not saved: ${checked.detail}`);
  }
}

const notFound = (id: string) => new AppError('not_found', `Webhook subscription ${id} does not exist`);
