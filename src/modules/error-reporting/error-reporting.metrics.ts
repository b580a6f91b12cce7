import { Counter, Gauge, Histogram } from 'prom-client';
import type { Registry } from 'prom-client';
import type { CallbackDispatcher } from './callback-dispatcher.js';
import type { DeliveryLogStoreStats } from './delivery-log-store.js';
import { deliveryOutcomeKinds } from '../../platform/outbound/delivery-outcome.js';
import type { DeliveryAttempt } from './delivery-log.js';
import { dropReasons } from './delivery-log.js';

/**
 * Error Reporting metrics. Counters are read from the dispatcher's totals when scraped, so the
 * hot path (a drop per submitted report under overload) pays nothing for them.
 */
export const registerErrorReportingMetrics = (registry: Registry, dispatcher: CallbackDispatcher, deliveryLog: () => DeliveryLogStoreStats) => {
  const reported = { attempts: new Map<string, number>(), dropped: new Map<string, number>() };

  new Counter({
    name: 'playline_error_reporting_attempts_total',
    help: 'Callback delivery attempts, by outcome',
    labelNames: ['outcome'] as const,
    registers: [registry],
    collect() {
      const totals = dispatcher.stats().totals.by_outcome;
      for (const outcome of deliveryOutcomeKinds) {
        this.inc({ outcome }, Math.max(0, totals[outcome] - (reported.attempts.get(outcome) ?? 0)));
        reported.attempts.set(outcome, totals[outcome]);
      }
    },
  });

  new Counter({
    name: 'playline_error_reporting_dropped_total',
    help: 'Error reports not sent, by reason: throttled, paused, discarded, overloaded',
    labelNames: ['reason'] as const,
    registers: [registry],
    collect() {
      const totals = dispatcher.stats().totals.dropped;
      for (const reason of dropReasons) {
        this.inc({ reason }, Math.max(0, totals[reason] - (reported.dropped.get(reason) ?? 0)));
        reported.dropped.set(reason, totals[reason]);
      }
    },
  });

  const gauges: Array<[string, string, (s: ReturnType<CallbackDispatcher['stats']>) => number]> = [
    ['playline_error_reporting_queued', 'Error reports waiting to be sent, all endpoints', (s) => s.queued],
    ['playline_error_reporting_in_flight', 'Callback requests in flight', (s) => s.inFlight],
    ['playline_error_reporting_endpoints', 'Callback endpoints known to the dispatcher', (s) => s.endpoints],
    ['playline_error_reporting_paused_endpoints', 'Callback endpoints currently paused after a failure', (s) => s.pausedEndpoints],
    ['playline_error_reporting_endpoint_rate', 'Error reports per second this instance sends to one endpoint at most: PLAYLINE_CALLBACK_RATE, divided among the live instances in cluster mode', (s) => s.ratePerEndpoint],
  ];
  for (const [name, help, read] of gauges) {
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read(dispatcher.stats()));
      },
    });
  }

  const logged = { full: 0, write_failed: 0 };
  new Counter({
    name: 'playline_error_reporting_log_dropped_total',
    help: 'Delivery attempts left out of the delivery log (the delivery itself happened): queue_full, write_failed',
    labelNames: ['reason'] as const,
    registers: [registry],
    collect() {
      const stats = deliveryLog();
      this.inc({ reason: 'queue_full' }, Math.max(0, stats.droppedFull - logged.full));
      this.inc({ reason: 'write_failed' }, Math.max(0, stats.droppedWriteFailed - logged.write_failed));
      logged.full = stats.droppedFull;
      logged.write_failed = stats.droppedWriteFailed;
    },
  });
  new Gauge({
    name: 'playline_error_reporting_log_queued',
    help: 'Delivery attempts waiting to be written to the delivery log',
    registers: [registry],
    collect() {
      this.set(deliveryLog().queued);
    },
  });

  const latency = new Histogram({
    name: 'playline_error_reporting_latency_seconds',
    help: 'Callback request latency (to the response headers), by outcome',
    labelNames: ['outcome'] as const,
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  return {
    /** Feed from the dispatcher's onAttempt. */
    observe(attempt: DeliveryAttempt): void {
      latency.observe({ outcome: attempt.outcome }, attempt.latencyMs / 1000);
    },
  };
};
