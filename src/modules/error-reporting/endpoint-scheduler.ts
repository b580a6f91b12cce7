import type { Clock } from '../../platform/clock.js';
import type { IdGenerator } from '../../platform/ids.js';
import type { CallbackRequest, CallbackTransport } from '../../platform/outbound/delivery-client.js';
import { CircularBuffer } from './circular-buffer.js';
import type { DeliveryOutcome } from '../../platform/outbound/delivery-outcome.js';
import { isUnreachable } from '../../platform/outbound/delivery-outcome.js';
import type { DeliveryAttempt, DeliveryLog, DroppedReport, DropReason } from './delivery-log.js';
import type { ErrorReport, ErrorReportInput } from './error-report.js';
import { boundedReport } from './error-report.js';
import type { WebhookSigner } from '../../platform/outbound/webhook-signature.js';

/** Where one workspace's reports go, and how they are signed. */
export interface CallbackRoute {
  owner: string;
  url: string;
  signer: WebhookSigner;
}

/** A pause schedule: `initialMs` after the first failure, doubling per consecutive failure, up to `maxMs`. */
export interface Backoff {
  initialMs: number;
  maxMs: number;
}

/** The state of one endpoint, for the deliveries API and /metrics. */
export interface EndpointState {
  url: string;
  queued: number;
  inFlight: number;
  /** Unix ms until which the endpoint is paused, or null. */
  pausedUntil: number | null;
  consecutiveFailures: number;
}

export interface EndpointSchedulerOptions {
  transport: CallbackTransport;
  clock: Clock;
  ids: IdGenerator;
  /** Where attempts and drops are counted (in memory, for the deliveries API). */
  log: DeliveryLog;
  /** The route a queued report is sent by, read when it is sent (the workspace may have moved on). */
  routeFor: (owner: string) => CallbackRoute | undefined;
  ratePerSecond: number;
  burst: number;
  queueCapacity: number;
  totalQueueCapacity: number;
  maxInFlight: number;
  failureBackoff: Backoff;
  unreachableBackoff: Backoff;
  /** After every attempt, with the exact request sent (the delivery log keeps it). */
  onAttempt: ((owner: string, attempt: DeliveryAttempt, request: CallbackRequest) => void) | undefined;
  /**
   * After every drop, with a function that builds the dropped report's entry for the delivery log
   * (the body and signature headers it would have been sent with). Building costs a JSON
   * serialization and an HMAC: call it only when the entry will be kept.
   */
  onDrop: ((owner: string, dropped: () => DroppedReport) => void) | undefined;
  onPause: ((url: string, pausedUntil: number, consecutiveFailures: number) => void) | undefined;
  /** A failure inside the scheduler's own bookkeeping (a hook that threw): reported, never thrown. */
  onError: (message: string, error: unknown) => void;
}

interface Endpoint {
  url: string;
  queue: CircularBuffer<ErrorReport>;
  inFlight: number;
  tokens: number;
  refilledAt: number;
  pausedUntil: number;
  consecutiveFailures: number;
  /** Bumped by every pause, so answers to requests sent before it do not escalate the backoff again. */
  generation: number;
  /** Workspaces whose route uses this endpoint; at 0 it is forgotten. */
  routes: number;
  kickScheduled: boolean;
  cancelTimer: (() => void) | undefined;
}

const pauseFor = (backoff: Backoff, failures: number): number =>
  Math.min(backoff.maxMs, backoff.initialMs * 2 ** Math.min(failures - 1, 30));

/**
 * Sending, per callback endpoint (URL): a bounded queue, a token bucket, a cap on requests in
 * flight, and pauses with a growing backoff after failures. No retries. An unreachable endpoint
 * also loses its pending reports. Endpoints exist while some workspace's route uses them.
 */
export class EndpointScheduler {
  /** This instance's part of the rate and burst (cluster mode: 1 / live instances). */
  private rate: number;
  private burst: number;
  private readonly endpoints = new Map<string, Endpoint>();
  private totalQueued = 0;
  private closed = false;

  constructor(private readonly o: EndpointSchedulerOptions) {
    this.rate = o.ratePerSecond;
    this.burst = o.burst;
  }

  /**
   * Cluster mode: each endpoint's rate and burst are shared by the instances, this one sending
   * at most `share` of them (1 / live instances), so an endpoint never gets more than configured.
   */
  setRateShare(share: number): void {
    const part = Math.min(1, Math.max(0.001, share));
    this.rate = this.o.ratePerSecond * part;
    this.burst = Math.max(1, this.o.burst * part);
  }

  /** Cluster mode: a pause another instance decided for `url`, applied when it ends later than ours. */
  pauseFromPeer(url: string, pausedUntil: number, consecutiveFailures: number): void {
    const endpoint = this.endpoints.get(url);
    if (!endpoint || pausedUntil <= endpoint.pausedUntil || this.closed) return;
    endpoint.consecutiveFailures = Math.max(endpoint.consecutiveFailures, consecutiveFailures);
    endpoint.generation += 1;
    endpoint.pausedUntil = pausedUntil;
    this.schedule(endpoint, Math.max(1, pausedUntil - this.o.clock.now()));
  }

  /**
   * Ends a pause at once (an operator's resume, a passing settings test): failures forgotten,
   * queued reports sent. Answers to requests sent before it no longer pause the endpoint. False
   * when the endpoint is unknown.
   */
  resume(url: string): boolean {
    const endpoint = this.endpoints.get(url);
    if (!endpoint || this.closed) return false;
    endpoint.pausedUntil = 0;
    endpoint.consecutiveFailures = 0;
    endpoint.generation += 1;
    endpoint.cancelTimer?.();
    endpoint.cancelTimer = undefined;
    this.pump(endpoint);
    return true;
  }

  /** A workspace's route now uses `url`. */
  acquire(url: string): void {
    let endpoint = this.endpoints.get(url);
    if (!endpoint) {
      endpoint = this.newEndpoint(url);
      this.endpoints.set(url, endpoint);
    }
    endpoint.routes += 1;
  }

  /** A workspace's route no longer uses `url`: the last one out discards the queue and forgets the endpoint. */
  release(url: string): void {
    const endpoint = this.endpoints.get(url);
    if (!endpoint) return;
    endpoint.routes -= 1;
    if (endpoint.routes > 0) return;
    endpoint.cancelTimer?.();
    this.discardQueue(endpoint);
    // An endpoint with requests in flight is forgotten when the last one settles.
    if (endpoint.inFlight === 0) this.endpoints.delete(url);
  }

  /**
   * Queues a report for `url` (its text fields cut to their caps, so a queued report has a bounded
   * size), or drops it (counted, handed to `onDrop`) and says why; O(1), never waits. A report
   * that is dropped is not copied first.
   */
  enqueue(url: string, report: ErrorReportInput): 'queued' | 'no_callback' | DropReason {
    const endpoint = this.endpoints.get(url);
    if (!endpoint || this.closed) return 'no_callback';
    const refused = this.refusal(endpoint);
    if (refused) {
      this.drop(report, refused, url);
      return refused;
    }
    endpoint.queue.push(boundedReport(report));
    this.totalQueued += 1;
    this.kick(endpoint);
    return 'queued';
  }

  private refusal(endpoint: Endpoint): DropReason | undefined {
    if (endpoint.pausedUntil > this.o.clock.now()) return 'paused';
    if (endpoint.queue.full) return 'throttled';
    if (this.totalQueued >= this.o.totalQueueCapacity) return 'overloaded';
    return undefined;
  }

  state(url: string): EndpointState | undefined {
    const endpoint = this.endpoints.get(url);
    return endpoint ? this.describe(endpoint) : undefined;
  }

  /** Process-wide figures for /metrics. */
  stats(): { queued: number; endpoints: number; pausedEndpoints: number; inFlight: number; ratePerEndpoint: number } {
    const now = this.o.clock.now();
    let paused = 0;
    let inFlight = 0;
    for (const endpoint of this.endpoints.values()) {
      if (endpoint.pausedUntil > now) paused += 1;
      inFlight += endpoint.inFlight;
    }
    return { queued: this.totalQueued, endpoints: this.endpoints.size, pausedEndpoints: paused, inFlight, ratePerEndpoint: this.rate };
  }

  /** Stops sending: timers cancelled, queues emptied; answers still in flight are ignored. */
  close(): void {
    this.closed = true;
    for (const endpoint of this.endpoints.values()) {
      endpoint.cancelTimer?.();
      this.discardQueue(endpoint);
    }
  }

  private newEndpoint(url: string): Endpoint {
    return {
      url,
      queue: new CircularBuffer<ErrorReport>(this.o.queueCapacity),
      inFlight: 0,
      tokens: this.burst,
      refilledAt: this.o.clock.now(),
      pausedUntil: 0,
      consecutiveFailures: 0,
      generation: 0,
      routes: 0,
      kickScheduled: false,
      cancelTimer: undefined,
    };
  }

  private kick(endpoint: Endpoint): void {
    // Sending starts after the submitting code finishes, so a batch of submits costs only the queueing.
    if (endpoint.kickScheduled) return;
    endpoint.kickScheduled = true;
    queueMicrotask(() => {
      endpoint.kickScheduled = false;
      this.pump(endpoint);
    });
  }

  private pump(endpoint: Endpoint): void {
    if (this.closed || endpoint.routes === 0) return;
    const now = this.o.clock.now();
    if (endpoint.pausedUntil > now) return; // the pause timer pumps again
    endpoint.tokens = Math.min(this.burst, endpoint.tokens + ((now - endpoint.refilledAt) * this.rate) / 1000);
    endpoint.refilledAt = now;
    while (endpoint.inFlight < this.o.maxInFlight && endpoint.queue.length > 0) {
      if (endpoint.tokens < 1) {
        const waitMs = Math.max(1, Math.ceil(((1 - endpoint.tokens) * 1000) / this.rate));
        this.schedule(endpoint, waitMs);
        return;
      }
      const report = endpoint.queue.shift() as ErrorReport;
      this.totalQueued -= 1;
      const route = this.o.routeFor(report.owner);
      if (!route || route.url !== endpoint.url) {
        this.drop(report, 'discarded', endpoint.url);
        continue;
      }
      endpoint.tokens -= 1;
      this.send(endpoint, route, report);
    }
  }

  private schedule(endpoint: Endpoint, ms: number): void {
    endpoint.cancelTimer?.();
    endpoint.cancelTimer = this.o.clock.setTimer(() => {
      endpoint.cancelTimer = undefined;
      this.pump(endpoint);
    }, ms);
  }

  private send(endpoint: Endpoint, route: CallbackRoute, report: ErrorReport): void {
    const webhookId = `msg_${this.o.ids.hex()}`;
    const body = JSON.stringify(report);
    const request: CallbackRequest = { body, headers: route.signer.sign(webhookId, this.o.clock.now() / 1000, body) };
    const generation = endpoint.generation;
    endpoint.inFlight += 1;
    this.o.transport
      .deliver(endpoint.url, request)
      .catch((error: unknown): DeliveryOutcome => ({ outcome: 'reset', status: null, latencyMs: 0, detail: String(error) }))
      .then((outcome) => this.settle(endpoint, report.owner, webhookId, generation, outcome, request))
      // Never an unhandled rejection on the delivery path (it would end the process).
      .catch((error: unknown) => this.o.onError('error-reporting: settling a callback attempt failed', error));
  }

  private settle(endpoint: Endpoint, owner: string, webhookId: string, generation: number, outcome: DeliveryOutcome, request: CallbackRequest): void {
    endpoint.inFlight -= 1;
    const attempt = this.o.log.recordAttempt(owner, webhookId, endpoint.url, this.o.clock.now(), outcome);
    // The hook runs last: should it throw, the endpoint's state is already whole.
    const notify = () => this.o.onAttempt?.(owner, attempt, request);
    if (endpoint.routes === 0) {
      if (endpoint.inFlight === 0 && this.endpoints.get(endpoint.url) === endpoint) this.endpoints.delete(endpoint.url);
      notify();
      return;
    }
    // An answer to a request sent before the current pause says nothing new about the endpoint.
    if (generation === endpoint.generation) {
      if (outcome.outcome === 'delivered') {
        endpoint.consecutiveFailures = 0;
      } else if (isUnreachable(outcome.outcome)) {
        this.discardQueue(endpoint);
        this.pause(endpoint, this.o.unreachableBackoff);
      } else {
        this.pause(endpoint, this.o.failureBackoff);
      }
    }
    this.pump(endpoint);
    notify();
  }

  private pause(endpoint: Endpoint, backoff: Backoff): void {
    endpoint.consecutiveFailures += 1;
    endpoint.generation += 1;
    const ms = pauseFor(backoff, endpoint.consecutiveFailures);
    endpoint.pausedUntil = this.o.clock.now() + ms;
    this.schedule(endpoint, ms);
    this.o.onPause?.(endpoint.url, endpoint.pausedUntil, endpoint.consecutiveFailures);
  }

  private discardQueue(endpoint: Endpoint): void {
    for (const report of endpoint.queue.drain()) {
      this.totalQueued -= 1;
      this.drop(report, 'discarded', endpoint.url);
    }
  }

  /** Counts a drop and offers it to the delivery log; never throws (it runs inside `submit`). */
  private drop(report: ErrorReportInput, reason: DropReason, url: string): void {
    this.o.log.recordDrop(report.owner, reason);
    if (!this.o.onDrop) return;
    try {
      this.o.onDrop(report.owner, () => this.droppedReport(report, reason, url));
    } catch (error) {
      this.o.onError('error-reporting: logging a dropped report failed', error);
    }
  }

  /**
   * The request a dropped report would have been sent as: a webhook-id of its own, signed now with
   * its workspace's secret. A workspace whose callback is gone has no signer here: its report is
   * logged unsigned (a resend signs it anyway).
   */
  private droppedReport(report: ErrorReportInput, reason: DropReason, url: string): DroppedReport {
    const at = this.o.clock.now();
    const webhookId = `msg_${this.o.ids.hex()}`;
    const body = JSON.stringify(boundedReport(report));
    const signer = this.o.routeFor(report.owner)?.signer;
    const headers = signer
      ? signer.sign(webhookId, at / 1000, body)
      : { 'webhook-id': webhookId, 'webhook-timestamp': String(Math.floor(at / 1000)), 'webhook-signature': '' };
    return {
      attempt: { at, webhookId, url, outcome: 'dropped', status: null, latencyMs: 0, detail: reason },
      request: { body, headers },
    };
  }

  private describe(endpoint: Endpoint): EndpointState {
    return {
      url: endpoint.url,
      queued: endpoint.queue.length,
      inFlight: endpoint.inFlight,
      pausedUntil: endpoint.pausedUntil > this.o.clock.now() ? endpoint.pausedUntil : null,
      consecutiveFailures: endpoint.consecutiveFailures,
    };
  }
}
