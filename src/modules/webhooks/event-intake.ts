import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import type { IdGenerator } from '../../platform/ids.js';
import type { OperationalEventData, OperationalEventSink, OperationalEventType } from '../../platform/operational-events.js';
import { lockWorkspace } from '../../platform/quota/workspace-quotas.js';
import type { WebhookMetrics } from './webhooks.metrics.js';
import * as repo from './webhooks.repository.js';
import { timeOrderedId } from './webhook-ids.js';
import { subscribedTypes } from './webhooks.view.js';

export interface EventIntakeOptions {
  db: Db;
  clock: Clock;
  ids: IdGenerator;
  metrics: WebhookMetrics;
  log: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
  /** Pending deliveries per subscription (PLAYLINE_WEBHOOK_MAX_PENDING); beyond, the oldest is dropped. */
  maxPending: number;
  /** Called once deliveries were stored: the deliverer looks at once. */
  stored(): void;
}

/** `2026-11-21T10:04:05.123000Z`: UTC with microseconds, as every ts_iso of the API. */
const isoMicros = (ms: number): string => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

/** The body every attempt of an event sends (Standard Webhooks' recommended shape: type, timestamp, data). */
export const eventBody = (owner: string, type: OperationalEventType, at: number, data: OperationalEventData): string =>
  JSON.stringify({ type, timestamp: isoMicros(at), data: { owner, ...data } });

/**
 * Turns an operational event into one stored delivery per enabled subscription of its workspace
 * that wants its type. Bounded: a subscription holds at most `maxPending` deliveries not yet
 * delivered; storing one more drops its oldest, which is logged in the delivery log (outcome
 * `dropped`, detail `overflow`, so it can still be resent), counted and warned about.
 */
export class EventIntake implements OperationalEventSink {
  /** Events being stored (emit does not wait): shutdown waits for them before the database closes. */
  private readonly storing = new Set<Promise<unknown>>();

  constructor(private readonly o: EventIntakeOptions) {}

  emit(owner: string, type: OperationalEventType, data: OperationalEventData): void {
    const storing = this.publish(owner, type, data).catch((err: unknown) => {
      this.o.metrics.lost();
      this.o.log.error({ err, owner, type }, 'an operational event could not be stored for its webhooks');
    });
    this.storing.add(storing);
    void storing.finally(() => this.storing.delete(storing));
  }

  /** Resolves once every event emitted so far is stored (or its failure logged). */
  async settled(): Promise<void> {
    while (this.storing.size > 0) await Promise.all([...this.storing]);
  }

  /** Stores the event's deliveries; resolves with how many (tests and producers that can wait). */
  async publish(owner: string, type: OperationalEventType, data: OperationalEventData): Promise<number> {
    const { db, clock, ids, metrics } = this.o;
    const subscriptions = (await repo.listSubscriptions(db, owner)).filter((s) => s.enabled === 1 && subscribedTypes(s).includes(type));
    if (subscriptions.length === 0) return 0;
    const now = clock.now();
    const body = eventBody(owner, type, now, data);
    let stored = 0;
    for (const subscription of subscriptions) {
      const dropped = await db.transaction().execute(async (trx) => {
        // One decision at a time per workspace (FOR UPDATE on PostgreSQL): the cap holds across instances.
        await lockWorkspace(trx, owner);
        const over = (await repo.countPending(trx, subscription.id)) - this.o.maxPending + 1;
        const oldest = await repo.oldestPending(trx, subscription.id, over);
        for (const old of oldest) {
          await repo.deletePending(trx, old.id);
          await repo.insertAttempt(trx, {
            id: timeOrderedId('att_', clock, ids),
            workspace_id: owner,
            webhook_id: old.event_id,
            url: subscription.url,
            at: now,
            outcome: 'dropped',
            status: null,
            latency_ms: 0,
            detail: 'overflow',
            body: old.body,
            headers: JSON.stringify({ 'webhook-id': old.event_id, 'webhook-timestamp': '', 'webhook-signature': '' }),
            resend_of: null,
            subscription_id: subscription.id,
          });
        }
        await repo.insertPendingDelivery(trx, {
          id: timeOrderedId('whd_', clock, ids),
          workspace_id: owner,
          subscription_id: subscription.id,
          event_id: `msg_${ids.hex()}`,
          event_type: type,
          body,
          attempts: 0,
          next_attempt_at: now,
          lease_owner: null,
          lease_expires_at: null,
          created_at: now,
        });
        return oldest.length;
      });
      stored += 1;
      metrics.enqueued(type);
      if (dropped > 0) {
        for (let i = 0; i < dropped; i++) metrics.gaveUp('overflow');
        this.o.log.warn({ subscription: subscription.id, dropped, max: this.o.maxPending }, 'a webhook endpoint has too many pending deliveries: the oldest was dropped (logged as dropped: overflow)');
      }
    }
    this.o.stored();
    return stored;
  }
}
