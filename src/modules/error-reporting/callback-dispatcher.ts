import type { Clock } from '../../platform/clock.js';
import type { ErrorReportSink } from '../../platform/error-report-sink.js';
import type { IdGenerator } from '../../platform/ids.js';
import type { CallbackTransport } from './callback-client.js';
import { CircularBuffer } from './circular-buffer.js';
import type { DeliveryOutcome } from './delivery-outcome.js';
import { isUnreachable } from './delivery-outcome.js';
import { DeliveryLog } from './delivery-log.js';
import type { DeliveryAttempt, DeliveryCounters, DropReason } from './delivery-log.js';
import type { ErrorReport, ErrorReportInput } from './error-report.js';
import { boundedReport } from './error-report.js';
import type { WebhookSigner } from './webhook-signature.js';

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

export interface CallbackDispatcherOptions {
  transport: CallbackTransport;
  clock: Clock;
  ids: IdGenerator;
  /** Sustained reports per second per endpoint. Default 500. */
  ratePerSecond?: number;
  /** Reports an idle endpoint may receive at once before the rate applies. Default 500. */
  burst?: number;
  /** Reports waiting per endpoint; more are dropped as `throttled`. Default 1000. */
  queueCapacity?: number;
  /** Reports waiting across all endpoints; more are dropped as `overloaded`. Default 100,000. */
  totalQueueCapacity?: number;
  /** Requests in flight per endpoint. Default 32 (throughput is in-flight / latency: 320/s at 100 ms). */
  maxInFlight?: number;
  /** After a non-200 or a reset. Default 1 s doubling to 2 min. */
  failureBackoff?: Backoff;
  /** After a connect error, timeout, TLS failure or SSRF refusal. Default 5 s doubling to 2 min. */
  unreachableBackoff?: Backoff;
  /** Attempts kept per workspace for the deliveries API. Default 100. */
  recentPerWorkspace?: number;
  /** Called after every attempt (logging, tests). Must not throw. */
  onAttempt?: (owner: string, attempt: DeliveryAttempt) => void;
  /** Called when this instance pauses an endpoint (cluster mode tells the other instances). Must not throw. */
  onPause?: (url: string, pausedUntil: number, consecutiveFailures: number) => void;
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

export type SubmitResult = 'queued' | 'no_callback' | DropReason;

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
  routes: number;
  kickScheduled: boolean;
  cancelTimer: (() => void) | undefined;
}

const pauseFor = (backoff: Backoff, failures: number): number =>
  Math.min(backoff.maxMs, backoff.initialMs * 2 ** Math.min(failures - 1, 30));

/**
 * Best-effort delivery of error reports to each workspace's callback URL. `submit` is synchronous and
 * O(1): it routes, queues or drops, and returns; sending happens later, per endpoint, throttled by a
 * token bucket and capped in flight. No retries. A non-200 pauses the endpoint with a growing backoff;
 * an unreachable endpoint also loses its pending reports. Every queue and ring has a fixed bound.
 */
export class CallbackDispatcher implements ErrorReportSink {
  readonly log: DeliveryLog;
  private readonly transport: CallbackTransport;
  private readonly clock: Clock;
  private readonly ids: IdGenerator;
  private readonly fullRate: number;
  private readonly fullBurst: number;
  /** This instance's part of the rate and burst (cluster mode: 1 / live instances). */
  private rate: number;
  private burst: number;
  private readonly queueCapacity: number;
  private readonly totalQueueCapacity: number;
  private readonly maxInFlight: number;
  private readonly failureBackoff: Backoff;
  private readonly unreachableBackoff: Backoff;
  private readonly onAttempt: ((owner: string, attempt: DeliveryAttempt) => void) | undefined;
  private readonly onPause: ((url: string, pausedUntil: number, consecutiveFailures: number) => void) | undefined;
  private readonly routes = new Map<string, CallbackRoute>();
  private readonly endpoints = new Map<string, Endpoint>();
  private totalQueued = 0;
  private closed = false;

  constructor(options: CallbackDispatcherOptions) {
    this.transport = options.transport;
    this.clock = options.clock;
    this.ids = options.ids;
    this.rate = this.fullRate = options.ratePerSecond ?? 500;
    this.burst = this.fullBurst = options.burst ?? 500;
    this.queueCapacity = options.queueCapacity ?? 1000;
    this.totalQueueCapacity = options.totalQueueCapacity ?? 100_000;
    this.maxInFlight = options.maxInFlight ?? 32;
    this.failureBackoff = options.failureBackoff ?? { initialMs: 1000, maxMs: 120_000 };
    this.unreachableBackoff = options.unreachableBackoff ?? { initialMs: 5000, maxMs: 120_000 };
    this.log = new DeliveryLog(options.recentPerWorkspace ?? 100);
    this.onAttempt = options.onAttempt;
    this.onPause = options.onPause;
  }

  /**
   * Cluster mode: each endpoint's rate and burst are shared by the instances, this one sending
   * at most `share` of them (1 / live instances), so an endpoint never gets more than configured.
   */
  setRateShare(share: number): void {
    const part = Math.min(1, Math.max(0.001, share));
    this.rate = this.fullRate * part;
    this.burst = Math.max(1, this.fullBurst * part);
  }

  /** Cluster mode: a pause another instance decided for `url`, applied when it ends later than ours. */
  pauseFromPeer(url: string, pausedUntil: number, consecutiveFailures: number): void {
    const endpoint = this.endpoints.get(url);
    if (!endpoint || pausedUntil <= endpoint.pausedUntil || this.closed) return;
    endpoint.consecutiveFailures = Math.max(endpoint.consecutiveFailures, consecutiveFailures);
    endpoint.generation += 1;
    endpoint.pausedUntil = pausedUntil;
    this.schedule(endpoint, Math.max(1, pausedUntil - this.clock.now()));
  }

  /** Queues a report for its owner's callback, or drops it; never waits and never throws. */
  submit(report: ErrorReportInput): SubmitResult {
    const route = this.routes.get(report.owner);
    if (!route || this.closed) return 'no_callback';
    const endpoint = this.endpoints.get(route.url);
    if (!endpoint) return 'no_callback';
    let reason: DropReason | undefined;
    if (endpoint.pausedUntil > this.clock.now()) reason = 'paused';
    else if (endpoint.queue.full) reason = 'throttled';
    else if (this.totalQueued >= this.totalQueueCapacity) reason = 'overloaded';
    if (reason) {
      this.log.recordDrop(report.owner, reason);
      return reason;
    }
    endpoint.queue.push(boundedReport(report));
    this.totalQueued += 1;
    this.kick(endpoint);
    return 'queued';
  }

  /** Sets (or with `undefined`, removes) a workspace's callback. Takes effect for the next report sent. */
  setRoute(owner: string, route: CallbackRoute | undefined): void {
    const previous = this.routes.get(owner);
    if (previous && route && previous.url === route.url) {
      this.routes.set(owner, route);
      return;
    }
    if (previous) {
      this.routes.delete(owner);
      this.release(previous.url);
    }
    if (!route) return;
    this.routes.set(owner, route);
    let endpoint = this.endpoints.get(route.url);
    if (!endpoint) {
      endpoint = this.newEndpoint(route.url);
      this.endpoints.set(route.url, endpoint);
    }
    endpoint.routes += 1;
  }

  /** Replaces every route at once (a full settings reload). */
  replaceRoutes(routes: Iterable<CallbackRoute>): void {
    const next = new Map<string, CallbackRoute>();
    for (const route of routes) next.set(route.owner, route);
    for (const owner of [...this.routes.keys()]) if (!next.has(owner)) this.setRoute(owner, undefined);
    for (const route of next.values()) this.setRoute(route.owner, route);
  }

  /** A deleted workspace: no route, no delivery log (reports still queued for it are dropped when they come up). */
  forgetWorkspace(owner: string): void {
    this.setRoute(owner, undefined);
    this.log.forgetWorkspace(owner);
  }

  routeFor(owner: string): CallbackRoute | undefined {
    return this.routes.get(owner);
  }

  endpointState(url: string): EndpointState | undefined {
    const endpoint = this.endpoints.get(url);
    return endpoint ? this.describe(endpoint) : undefined;
  }

  /** What the deliveries API shows for a workspace. */
  deliveries(owner: string): { counters: DeliveryCounters; recent: DeliveryAttempt[]; endpoint: EndpointState | undefined } {
    const route = this.routes.get(owner);
    return { ...this.log.forWorkspace(owner), endpoint: route ? this.endpointState(route.url) : undefined };
  }

  /** Process-wide figures for /metrics. */
  stats(): { totals: DeliveryCounters; queued: number; endpoints: number; pausedEndpoints: number; inFlight: number } {
    const now = this.clock.now();
    let paused = 0;
    let inFlight = 0;
    for (const endpoint of this.endpoints.values()) {
      if (endpoint.pausedUntil > now) paused += 1;
      inFlight += endpoint.inFlight;
    }
    return { totals: this.log.totals, queued: this.totalQueued, endpoints: this.endpoints.size, pausedEndpoints: paused, inFlight };
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
      queue: new CircularBuffer<ErrorReport>(this.queueCapacity),
      inFlight: 0,
      tokens: this.burst,
      refilledAt: this.clock.now(),
      pausedUntil: 0,
      consecutiveFailures: 0,
      generation: 0,
      routes: 0,
      kickScheduled: false,
      cancelTimer: undefined,
    };
  }

  private release(url: string): void {
    const endpoint = this.endpoints.get(url);
    if (!endpoint) return;
    endpoint.routes -= 1;
    if (endpoint.routes > 0) return;
    endpoint.cancelTimer?.();
    this.discardQueue(endpoint);
    // An endpoint with requests in flight is forgotten when the last one settles.
    if (endpoint.inFlight === 0) this.endpoints.delete(url);
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
    const now = this.clock.now();
    if (endpoint.pausedUntil > now) return; // the pause timer pumps again
    endpoint.tokens = Math.min(this.burst, endpoint.tokens + ((now - endpoint.refilledAt) * this.rate) / 1000);
    endpoint.refilledAt = now;
    while (endpoint.inFlight < this.maxInFlight && endpoint.queue.length > 0) {
      if (endpoint.tokens < 1) {
        const waitMs = Math.max(1, Math.ceil(((1 - endpoint.tokens) * 1000) / this.rate));
        this.schedule(endpoint, waitMs);
        return;
      }
      const report = endpoint.queue.shift() as ErrorReport;
      this.totalQueued -= 1;
      const route = this.routes.get(report.owner);
      if (!route || route.url !== endpoint.url) {
        this.log.recordDrop(report.owner, 'discarded');
        continue;
      }
      endpoint.tokens -= 1;
      this.send(endpoint, route, report);
    }
  }

  private schedule(endpoint: Endpoint, ms: number): void {
    endpoint.cancelTimer?.();
    endpoint.cancelTimer = this.clock.setTimer(() => {
      endpoint.cancelTimer = undefined;
      this.pump(endpoint);
    }, ms);
  }

  private send(endpoint: Endpoint, route: CallbackRoute, report: ErrorReport): void {
    const webhookId = `msg_${this.ids.uuid().replaceAll('-', '')}`;
    const body = JSON.stringify(report);
    const headers = route.signer.sign(webhookId, this.clock.now() / 1000, body);
    const generation = endpoint.generation;
    endpoint.inFlight += 1;
    this.transport
      .deliver(endpoint.url, { body, headers: { ...headers } })
      .catch((error: unknown): DeliveryOutcome => ({ outcome: 'reset', status: null, latencyMs: 0, detail: String(error) }))
      .then((outcome) => this.settle(endpoint, report.owner, webhookId, generation, outcome));
  }

  private settle(endpoint: Endpoint, owner: string, webhookId: string, generation: number, outcome: DeliveryOutcome): void {
    endpoint.inFlight -= 1;
    const attempt = this.log.recordAttempt(owner, webhookId, endpoint.url, this.clock.now(), outcome);
    this.onAttempt?.(owner, attempt);
    if (endpoint.routes === 0) {
      if (endpoint.inFlight === 0 && this.endpoints.get(endpoint.url) === endpoint) this.endpoints.delete(endpoint.url);
      return;
    }
    // An answer to a request sent before the current pause says nothing new about the endpoint.
    if (generation === endpoint.generation) {
      if (outcome.outcome === 'delivered') {
        endpoint.consecutiveFailures = 0;
      } else if (isUnreachable(outcome.outcome)) {
        this.discardQueue(endpoint);
        this.pause(endpoint, this.unreachableBackoff);
      } else {
        this.pause(endpoint, this.failureBackoff);
      }
    }
    this.pump(endpoint);
  }

  private pause(endpoint: Endpoint, backoff: Backoff): void {
    endpoint.consecutiveFailures += 1;
    endpoint.generation += 1;
    const ms = pauseFor(backoff, endpoint.consecutiveFailures);
    endpoint.pausedUntil = this.clock.now() + ms;
    this.schedule(endpoint, ms);
    this.onPause?.(endpoint.url, endpoint.pausedUntil, endpoint.consecutiveFailures);
  }

  private discardQueue(endpoint: Endpoint): void {
    for (const report of endpoint.queue.drain()) {
      this.totalQueued -= 1;
      this.log.recordDrop(report.owner, 'discarded');
    }
  }

  private describe(endpoint: Endpoint): EndpointState {
    return {
      url: endpoint.url,
      queued: endpoint.queue.length,
      inFlight: endpoint.inFlight,
      pausedUntil: endpoint.pausedUntil > this.clock.now() ? endpoint.pausedUntil : null,
      consecutiveFailures: endpoint.consecutiveFailures,
    };
  }
}
