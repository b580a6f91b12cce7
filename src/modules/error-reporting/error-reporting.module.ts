import type { BackgroundWork } from '../../platform/background-work.js';
import type { Clock } from '../../platform/clock.js';
import { systemClock } from '../../platform/clock.js';
import type { Config } from '../../platform/config.js';
import type { Db } from '../../platform/db/database.js';
import type { IdGenerator } from '../../platform/ids.js';
import type { Logger } from '../../platform/logger.js';
import type { ModuleParts } from '../../platform/module-parts.js';
import type { Outbound } from '../../platform/net/outbound.js';
import type { SecretBox } from '../../platform/secret-box.js';
import type { Registry } from 'prom-client';
import { CallbackClient } from '../../platform/outbound/delivery-client.js';
import type { CallbackTransport } from '../../platform/outbound/delivery-client.js';
import { ThreadedCallbackSender } from './callback-sender.js';
import { CallbackDispatcher } from './callback-dispatcher.js';
import { CallbackRouteSync } from './callback-route-sync.js';
import type { DeliveryAttempt } from './delivery-log.js';
import { DeliveryLogStore } from './delivery-log-store.js';
import { registerErrorReportingMetrics } from './error-reporting.metrics.js';
import { ErrorReportingService } from './error-reporting.service.js';
import { deleteWorkspaceRows } from './error-reporting.repository.js';
import { errorReportingRoutes } from './error-reporting.routes.js';
import type { CallbackSettings } from './error-reporting.service.js';

/** The runtime pieces Error Reporting is built from (a structural subset of `Runtime`). */
export interface ErrorReportingDeps {
  config: Pick<
    Config,
    'outboundAllowlist' | 'callbackRatePerS' | 'callbackQueueSize' | 'callbackTimeoutMs' | 'callbackConcurrency' | 'callbackBackoffMs' | 'callbackBackoffMaxMs' | 'callbackThread'
    | 'deliveryLogRetentionH' | 'deliveryLogMaxPerWorkspace' | 'deliveryLogQueue' | 'deliveryLogWriteRate'
  >;
  clock: Clock;
  ids: IdGenerator;
  storage: { db: Db };
  box: SecretBox;
  metrics: { registry: Registry };
  /** The module's logger (a child of the runtime's root). */
  log: Pick<Logger, 'warn' | 'error'>;
  /** The one way out of the process (platform/net/outbound.ts): the guard and DNS pinning are inside. */
  outbound: Outbound;
}

/** Cluster mode's link between instances (callback-link.ts): changes travel at once. */
export interface CallbackClusterLink {
  /** Tells the other instances that `owner`'s callback settings changed (saved in the database). */
  settingsChanged(owner: string): void;
  /** Tells the other instances that this one paused `url`. */
  paused(url: string, pausedUntil: number, consecutiveFailures: number): void;
  /** Tells the other instances that `url` was resumed on request. */
  resumed(url: string): void;
  /** Hands over what other instances announce. */
  listen(handlers: {
    settings(owner: string): void;
    pause(url: string, pausedUntil: number, consecutiveFailures: number): void;
    resume?(url: string): void;
  }): Promise<void>;
}

export interface ErrorReportingOverrides {
  /** Cluster mode: settings changes and endpoint pauses reach the other instances at once. */
  cluster?: CallbackClusterLink;
  /** Settings check interval for changes made by other instances. Default 500 ms. */
  pollMs?: number;
  onError?: (error: unknown) => void;
}

/** Everything Error Reporting runs: the service behind the routes, the dispatcher, its background work. */
export interface ErrorReporting {
  service: ErrorReportingService;
  dispatcher: CallbackDispatcher;
  /** The settings test's client (and the sender too when deliveries run on the main thread). */
  client: CallbackClient;
  /** What deliveries go through: the sender thread, or `client` itself. */
  transport: CallbackTransport & { close(): Promise<void> };
  routeSync: CallbackRouteSync;
  /** The persistent delivery log (every attempt with its body and signature headers). */
  deliveryLog: DeliveryLogStore;
  /** Loads the callbacks and follows their changes; stop closes connections. */
  background: BackgroundWork;
  parts: ModuleParts;
}

/** Builds Error Reporting from the runtime's pieces; a bad allow-list entry stops the start. */
export function createErrorReporting(deps: ErrorReportingDeps, overrides: ErrorReportingOverrides = {}): ErrorReporting {
  const { config, clock, ids, box } = deps;
  const db = deps.storage.db;
  const client = new CallbackClient({
    outbound: deps.outbound,
    clock,
    timeoutMs: config.callbackTimeoutMs,
    connectionsPerEndpoint: config.callbackConcurrency,
  });
  // The sender thread keeps delivery off the event loop that serves the API. It runs on the system
  // clock and DNS (its outbound layer is rebuilt there from the allow-list), so a runtime given a
  // test clock or resolver sends from the main thread instead.
  const threaded = config.callbackThread && clock === systemClock && deps.outbound.systemDns;
  const onError = (message: string, err: unknown) => deps.log.error({ err }, message);
  const transport = threaded
    ? new ThreadedCallbackSender({
        allowList: config.outboundAllowlist,
        timeoutMs: config.callbackTimeoutMs,
        connectionsPerEndpoint: config.callbackConcurrency,
        onError,
      })
    : client;
  const deliveryLog = new DeliveryLogStore({
    db,
    clock,
    ids,
    queueCapacity: config.deliveryLogQueue,
    writeRatePerS: config.deliveryLogWriteRate,
    retentionMs: config.deliveryLogRetentionH * 3_600_000,
    maxPerWorkspace: config.deliveryLogMaxPerWorkspace,
    onError,
  });
  // The metrics read the dispatcher, and the dispatcher feeds the latency histogram: tie the knot.
  let observe: (attempt: DeliveryAttempt) => void = () => undefined;
  const dispatcher = new CallbackDispatcher({
    transport,
    clock,
    ids,
    ratePerSecond: config.callbackRatePerS,
    burst: config.callbackRatePerS,
    queueCapacity: config.callbackQueueSize,
    maxInFlight: config.callbackConcurrency,
    failureBackoff: { initialMs: config.callbackBackoffMs, maxMs: config.callbackBackoffMaxMs },
    unreachableBackoff: { initialMs: Math.min(config.callbackBackoffMs * 5, config.callbackBackoffMaxMs), maxMs: config.callbackBackoffMaxMs },
    onAttempt: (owner, attempt, request) => {
      observe(attempt);
      deliveryLog.record(owner, attempt, request);
    },
    // Dropped reports are logged too (outcome `dropped`), within the log's queue and write rate.
    onDrop: (owner, dropped) => void deliveryLog.recordDropped(owner, dropped),
    onError,
    ...(overrides.cluster ? { onPause: overrides.cluster.paused.bind(overrides.cluster), onResume: overrides.cluster.resumed.bind(overrides.cluster) } : {}),
  });
  observe = registerErrorReportingMetrics(deps.metrics.registry, dispatcher, () => deliveryLog.stats()).observe;
  const routeSync = new CallbackRouteSync({
    db,
    box,
    clock,
    dispatcher,
    ...(overrides.pollMs !== undefined ? { pollMs: overrides.pollMs } : {}),
    onError: overrides.onError ?? ((err: unknown) => deps.log.warn({ err }, 'Error Reporting settings check failed (callbacks keep their last known settings)')),
  });
  const link = overrides.cluster;
  const routes = link
    ? {
        apply(settings: CallbackSettings) {
          routeSync.apply(settings);
          link.settingsChanged(settings.owner);
        },
      }
    : routeSync;
  const service = new ErrorReportingService({ db, box, clock, ids, tester: client, dispatcher, routes, deliveryLog });
  const background: BackgroundWork = {
    name: 'error-reporting',
    async start() {
      await routeSync.start();
      deliveryLog.start();
      await link?.listen({
        settings: () => void routeSync.refresh(),
        pause: (url, until, failures) => dispatcher.pauseFromPeer(url, until, failures),
        resume: (url) => dispatcher.resumeFromPeer(url),
      });
    },
    async stop() {
      routeSync.stop();
      dispatcher.close();
      // The sender thread, when there is one; the client either way (it is the sender otherwise).
      if (transport !== client) await transport.close();
      await client.close();
      // Last: the attempts that ended while closing are written too.
      await deliveryLog.stop();
    },
  };
  return {
    service,
    dispatcher,
    client,
    transport,
    routeSync,
    deliveryLog,
    background,
    parts: {
      name: 'error_reporting',
      apiRoutes: (api) => errorReportingRoutes(api, { errorReporting: service }),
      work: [background],
      workspaceData: [
        {
          name: 'error_reporting',
          deleteRows: deleteWorkspaceRows,
          forget: async (owner) => {
            dispatcher.forgetWorkspace(owner);
            deliveryLog.forgetWorkspace(owner);
          },
        },
      ],
    },
  };
}
