import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import type { IdGenerator } from '../../platform/ids.js';
import { LeasedWork, type RunnerLog } from '../../platform/leased-work.js';
import type { SecretBox } from '../../platform/secret-box.js';
import type { CallbackTransport } from '../../platform/outbound/delivery-client.js';
import type { DeliveryOutcome } from '../../platform/outbound/delivery-outcome.js';
import type { WebhookMetrics } from './webhooks.metrics.js';
import * as repo from './webhooks.repository.js';
import { subscriptionSigner, timeOrderedId } from './webhook-ids.js';

/**
 * When each attempt is made, after the previous one failed (Svix's schedule): at once, then 5 s,
 * 5 min, 30 min, 2 h, 5 h and 10 h later. Seven attempts over about 17 h 35 min.
 */
export const RETRY_SCHEDULE_MS: readonly number[] = [0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000];

export interface WebhookDelivererOptions {
  db: Db;
  box: SecretBox;
  clock: Clock;
  ids: IdGenerator;
  /** Sends one signed POST (the Error Reports' client: SSRF guard with DNS pinning, timeout, bounded answer read). */
  transport: CallbackTransport;
  log: RunnerLog;
  metrics: WebhookMetrics;
  /** Names this instance in leases; unique per process. */
  ownerId: string;
  /** Embedded mode: the only instance on its database takes back every lease at start. */
  exclusive: boolean;
  /** Attempts in flight at once (PLAYLINE_WEBHOOK_CONCURRENCY). */
  concurrency: number;
  /** How long a claimed attempt stays this instance's: well beyond the attempt's timeout. */
  leaseMs: number;
  /** How often to look for attempts due that no timer here knows of (another instance's, an expired lease). */
  pollMs: number;
}

/** What an attempt came to, for the log's detail: the failure, and what happens next. */
const describe = (outcome: DeliveryOutcome, attempt: number, next: { at: number } | undefined): string | null => {
  if (outcome.outcome === 'delivered') return attempt > 1 ? `attempt ${attempt} of ${RETRY_SCHEDULE_MS.length}` : null;
  const failure = outcome.detail ?? outcome.outcome;
  const then = next ? `next attempt at ${new Date(next.at).toISOString()}` : 'no attempt left: given up';
  return `attempt ${attempt} of ${RETRY_SCHEDULE_MS.length}: ${failure}; ${then}`;
};

/**
 * Sends stored event deliveries, with retries on RETRY_SCHEDULE_MS. Every attempt is claimed
 * under a lease in the database (one instance sends it), and ends in one transaction that logs it
 * in the delivery log and either removes the delivery or stores the time of the next attempt: a
 * restart between attempts loses nothing, and the next start resumes what is due. A timer wakes
 * the runner when the next known attempt is due; a slower poll finds the rest.
 */
export class WebhookDeliverer {
  private readonly work: LeasedWork<repo.PendingDeliveryRow>;
  private wake: { at: number; cancel: () => void } | undefined;
  private stopped = false;

  constructor(private readonly o: WebhookDelivererOptions) {
    this.work = new LeasedWork<repo.PendingDeliveryRow>({
      clock: o.clock,
      log: o.log,
      noun: 'webhook attempt',
      concurrency: o.concurrency,
      leaseMs: o.leaseMs,
      pollMs: o.pollMs,
      claim: () => this.claim(),
      keyOf: (delivery) => delivery.id,
      run: (delivery, controller) => this.attempt(delivery, controller.signal),
      ...(o.exclusive ? { releaseHeld: () => repo.releaseAllLeases(o.db) } : {}),
      resumedMessage: 'resuming the webhook attempts interrupted by the previous shutdown',
    });
  }

  start(): Promise<void> {
    this.stopped = false;
    return this.work.start();
  }

  /** Looks for due attempts now (after an event was stored). */
  notify(): void {
    this.work.notify();
  }

  /** Looks now and resolves once this look is over. */
  claimNow(): Promise<void> {
    return this.work.claimNow();
  }

  /**
   * Claims nothing more and waits for the attempts in flight. `interrupt` (closing the HTTP client)
   * ends them at once: an attempt cut short by the shutdown is not counted, its lease is given back
   * and the next start makes it again.
   */
  async stop(interrupt: () => Promise<void> = async () => undefined): Promise<void> {
    this.stopped = true;
    this.wake?.cancel();
    this.wake = undefined;
    const stopping = this.work.stop();
    await interrupt();
    await stopping;
  }

  /** Attempts in flight here. */
  get inFlight(): number {
    return this.work.size;
  }

  private async claim(): Promise<repo.PendingDeliveryRow | undefined> {
    const { db, clock, ownerId, leaseMs } = this.o;
    const now = clock.now();
    for (const id of await repo.dueDeliveryIds(db, now, 16)) {
      const claimed = await repo.claimDelivery(db, id, ownerId, now, leaseMs);
      if (claimed) return claimed;
    }
    const next = await repo.nextDueAt(db);
    if (next !== undefined && next > now) this.wakeAt(next);
    return undefined;
  }

  /** One timer, for the earliest attempt known to be due. */
  private wakeAt(at: number): void {
    if (this.stopped || (this.wake && this.wake.at <= at)) return;
    this.wake?.cancel();
    const cancel = this.o.clock.setTimer(() => {
      this.wake = undefined;
      this.work.notify();
    }, Math.max(1, at - this.o.clock.now()));
    this.wake = { at, cancel };
  }

  private async attempt(delivery: repo.PendingDeliveryRow, signal: AbortSignal): Promise<void> {
    const { db, box, clock, ids, transport, metrics, log, ownerId } = this.o;
    const subscription = await repo.findSubscriptionById(db, delivery.subscription_id);
    if (!subscription) {
      // Deleted meanwhile (its deletion removes its deliveries; this one was in flight).
      if (await repo.deletePending(db, delivery.id)) metrics.gaveUp('subscription_gone');
      return;
    }
    const number = Number(delivery.attempts) + 1;
    const headers = subscriptionSigner(subscription, box, clock.now()).sign(delivery.event_id, clock.now() / 1000, delivery.body);
    const outcome = await transport.deliver(subscription.url, { body: delivery.body, headers: { ...headers } });
    // Cut short by the shutdown (the client closed under it): not counted, made again after the restart.
    if ((this.stopped || signal.aborted) && outcome.outcome !== 'delivered') {
      await repo.releaseLease(db, delivery.id, ownerId);
      return;
    }
    const ended = clock.now();
    const delay = outcome.outcome === 'delivered' ? undefined : RETRY_SCHEDULE_MS[number];
    const next = delay === undefined ? undefined : { at: ended + delay };
    const logged: repo.AttemptRow = {
      id: timeOrderedId('att_', clock, ids),
      workspace_id: delivery.workspace_id,
      webhook_id: delivery.event_id,
      url: subscription.url,
      at: ended,
      outcome: outcome.outcome,
      status: outcome.status,
      latency_ms: Math.max(0, Math.round(outcome.latencyMs)),
      detail: describe(outcome, number, next),
      body: delivery.body,
      headers: JSON.stringify(headers),
      resend_of: null,
      subscription_id: subscription.id,
    };
    const written = await repo.finishAttempt(db, { id: delivery.id, leaseOwner: ownerId, attempts: Number(delivery.attempts) }, logged, next);
    metrics.attempted(outcome.outcome);
    if (!written) {
      log.warn({ delivery: delivery.id }, 'a webhook attempt ended after its lease was taken over or its subscription deleted; not recorded');
      return;
    }
    if (next) {
      metrics.retryScheduled();
      this.wakeAt(next.at);
    } else if (outcome.outcome !== 'delivered') {
      metrics.gaveUp('exhausted');
      log.warn({ delivery: delivery.id, subscription: subscription.id, event: delivery.event_type }, `a webhook delivery failed ${number} attempts and was given up`);
    }
  }
}
