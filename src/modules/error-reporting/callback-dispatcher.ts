import type { Clock } from '../../platform/clock.js';
import type { ErrorReportSink } from '../../platform/error-report-sink.js';
import type { IdGenerator } from '../../platform/ids.js';
import type { CallbackRequest, CallbackTransport } from '../../platform/outbound/delivery-client.js';
import type { DeliveryOutcome } from '../../platform/outbound/delivery-outcome.js';
import type { DeliveryAttempt, DeliveryCounters, DroppedReport, DropReason } from './delivery-log.js';
import { DeliveryLog } from './delivery-log.js';
import type { ErrorReportInput } from './error-report.js';
import { EndpointScheduler, type Backoff, type CallbackRoute, type EndpointState } from './endpoint-scheduler.js';

export type { Backoff, CallbackRoute, EndpointState } from './endpoint-scheduler.js';

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
  /** Called after every attempt with the exact request sent (delivery log, metrics, tests). Must not throw. */
  onAttempt?: (owner: string, attempt: DeliveryAttempt, request: CallbackRequest) => void;
  /**
   * Called after every dropped report (paused, throttled, overloaded, discarded) with a function
   * that builds its delivery log entry: the body and signature headers it would have been sent
   * with. Call it only for an entry that will be kept (it serializes and signs). Must not throw.
   */
  onDrop?: (owner: string, dropped: () => DroppedReport) => void;
  /** Called when this instance pauses an endpoint (cluster mode tells the other instances). Must not throw. */
  onPause?: (url: string, pausedUntil: number, consecutiveFailures: number) => void;
  /** Called when this instance resumes an endpoint on request (cluster mode tells the other instances). Must not throw. */
  onResume?: (url: string) => void;
  /** A failure after an answer (a hook that threw): reported here, never an unhandled rejection. */
  onError?: (message: string, error: unknown) => void;
}

export type SubmitResult = 'queued' | 'no_callback' | DropReason;

/**
 * Best-effort delivery of error reports to each workspace's callback URL. This is the route table
 * (workspace -> URL and signer); sending is the endpoint scheduler's (endpoint-scheduler.ts: per
 * URL a bounded queue, a token bucket, a cap in flight, pauses after failures). `submit` is
 * synchronous and O(1): it routes, queues or drops, and returns. No retries. Every queue and ring
 * has a fixed bound.
 */
export class CallbackDispatcher implements ErrorReportSink {
  readonly log: DeliveryLog;
  private readonly routes = new Map<string, CallbackRoute>();
  private readonly scheduler: EndpointScheduler;
  private closed = false;

  constructor(private readonly options: CallbackDispatcherOptions) {
    this.log = new DeliveryLog(options.recentPerWorkspace ?? 100);
    this.scheduler = new EndpointScheduler({
      transport: options.transport,
      clock: options.clock,
      ids: options.ids,
      log: this.log,
      routeFor: (owner) => this.routes.get(owner),
      ratePerSecond: options.ratePerSecond ?? 500,
      burst: options.burst ?? 500,
      queueCapacity: options.queueCapacity ?? 1000,
      totalQueueCapacity: options.totalQueueCapacity ?? 100_000,
      maxInFlight: options.maxInFlight ?? 32,
      failureBackoff: options.failureBackoff ?? { initialMs: 1000, maxMs: 120_000 },
      unreachableBackoff: options.unreachableBackoff ?? { initialMs: 5000, maxMs: 120_000 },
      onAttempt: options.onAttempt,
      onDrop: options.onDrop,
      onPause: options.onPause,
      onError: options.onError ?? (() => undefined),
    });
  }

  /**
   * Cluster mode: each endpoint's rate and burst are shared by the instances, this one sending
   * at most `share` of them (1 / live instances), so an endpoint never gets more than configured.
   */
  setRateShare(share: number): void {
    this.scheduler.setRateShare(share);
  }

  /** Cluster mode: a pause another instance decided for `url`, applied when it ends later than ours. */
  pauseFromPeer(url: string, pausedUntil: number, consecutiveFailures: number): void {
    this.scheduler.pauseFromPeer(url, pausedUntil, consecutiveFailures);
  }

  /** Cluster mode: another instance resumed `url`. */
  resumeFromPeer(url: string): void {
    this.scheduler.resume(url);
  }

  /**
   * Ends the pause of the workspace's callback endpoint at once (and on every instance in cluster
   * mode). Undefined when the workspace has no active callback.
   */
  resume(owner: string): EndpointState | undefined {
    const route = this.routes.get(owner);
    if (!route || this.closed) return undefined;
    this.scheduler.resume(route.url);
    this.options.onResume?.(route.url);
    return this.scheduler.state(route.url);
  }

  /**
   * Sends one logged report again to the workspace's current callback, at once and outside the
   * queue (an operator asked for it): signed anew with a new timestamp, keeping its `webhook-id` (a
   * resent message keeps its id, as Standard Webhooks asks, so receivers can deduplicate). Best
   * effort: the outcome is counted and returned, the endpoint's pause state is left as it is.
   * Undefined when the workspace has no active callback.
   */
  async resend(owner: string, webhookId: string, body: string): Promise<{ attempt: DeliveryAttempt; request: CallbackRequest } | undefined> {
    const route = this.routes.get(owner);
    if (!route || this.closed) return undefined;
    const { clock, transport } = this.options;
    const request: CallbackRequest = { body, headers: { ...route.signer.sign(webhookId, clock.now() / 1000, body) } };
    const outcome = await transport
      .deliver(route.url, request)
      .catch((error: unknown): DeliveryOutcome => ({ outcome: 'reset', status: null, latencyMs: 0, detail: String(error) }));
    return { attempt: this.log.recordAttempt(owner, webhookId, route.url, clock.now(), outcome), request };
  }

  /** Queues a report for its owner's callback, or drops it; never waits and never throws. */
  submit(report: ErrorReportInput): SubmitResult {
    const route = this.routes.get(report.owner);
    if (!route || this.closed) return 'no_callback';
    // A drop is counted and logged by the scheduler.
    return this.scheduler.enqueue(route.url, report);
  }

  /** Sets (or with `undefined`, removes) a workspace's callback. Takes effect for the next report sent. */
  setRoute(owner: string, route: CallbackRoute | undefined): void {
    const previous = this.routes.get(owner);
    if (previous && route && previous.url === route.url) {
      this.routes.set(owner, route);
      return;
    }
    if (previous) {
      // Released while the route is still known: reports discarded with the endpoint are logged signed.
      this.scheduler.release(previous.url);
      this.routes.delete(owner);
    }
    if (!route) return;
    this.routes.set(owner, route);
    this.scheduler.acquire(route.url);
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
    return this.scheduler.state(url);
  }

  /** What the deliveries API shows for a workspace. */
  deliveries(owner: string): { counters: DeliveryCounters; recent: DeliveryAttempt[]; endpoint: EndpointState | undefined } {
    const route = this.routes.get(owner);
    return { ...this.log.forWorkspace(owner), endpoint: route ? this.scheduler.state(route.url) : undefined };
  }

  /** Process-wide figures for /metrics. */
  stats(): { totals: DeliveryCounters; queued: number; endpoints: number; pausedEndpoints: number; inFlight: number; ratePerEndpoint: number } {
    return { totals: this.log.totals, ...this.scheduler.stats() };
  }

  /** Stops sending: timers cancelled, queues emptied; answers still in flight are ignored. */
  close(): void {
    this.closed = true;
    this.scheduler.close();
  }
}
