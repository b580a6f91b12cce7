import { Registry, collectDefaultMetrics } from 'prom-client';
import type { App } from './types.js';
import type { ConnectionCounts } from './connection-limits.js';

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

interface RouteStats {
  method: string;
  route: string;
  /** Count per status code. */
  statuses: Map<number, number>;
  /** Cumulative-at-render bucket counts (index i: duration ≤ BUCKETS[i]). */
  buckets: number[];
  sum: number;
  count: number;
}

const escapeLabel = (v: string) => v.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n');

/**
 * Prometheus metrics of one runtime. HTTP request counts and latency histograms are kept in
 * plain per-route records (one map lookup per request, no label hashing on the hot path) and
 * rendered in the exposition format; modules register their own prom-client metrics on
 * `registry`.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly routes = new Map<string, RouteStats>();
  /** The record of a route, keyed by its (per-route, long-lived) config object. */
  private readonly byRouteConfig = new WeakMap<object, RouteStats>();

  constructor(options: { processMetrics?: boolean } = {}) {
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry, prefix: 'playline_' });
  }

  private connections: ConnectionCounts | undefined;

  /** Where the counts of connections refused by the connection caps come from. */
  countConnections(counts: ConnectionCounts): void {
    this.connections = counts;
  }

  /** `routeKey`: an object that is the same for every request of a route (its config). */
  observeRequest(method: string, route: string, status: number, seconds: number, routeKey?: object): void {
    let stats = routeKey ? this.byRouteConfig.get(routeKey) : undefined;
    if (!stats) {
      const key = `${method} ${route}`;
      stats = this.routes.get(key);
      if (!stats) {
        stats = { method, route, statuses: new Map(), buckets: new Array<number>(BUCKETS.length).fill(0), sum: 0, count: 0 };
        this.routes.set(key, stats);
      }
      if (routeKey) this.byRouteConfig.set(routeKey, stats);
    }
    stats.statuses.set(status, (stats.statuses.get(status) ?? 0) + 1);
    stats.sum += seconds;
    stats.count += 1;
    for (let i = 0; i < BUCKETS.length; i++) {
      if (seconds <= (BUCKETS[i] as number)) {
        stats.buckets[i] = (stats.buckets[i] as number) + 1;
        break;
      }
    }
  }

  /** The whole exposition: HTTP metrics followed by every registered metric. */
  async render(): Promise<string> {
    const lines = [
      '# HELP playline_http_requests_total HTTP requests answered, by method, route and status',
      '# TYPE playline_http_requests_total counter',
    ];
    for (const s of this.routes.values()) {
      for (const [status, n] of s.statuses) lines.push(`playline_http_requests_total{method="${s.method}",route="${escapeLabel(s.route)}",status="${status}"} ${n}`);
    }
    lines.push('# HELP playline_http_request_duration_seconds HTTP request latency, by method and route', '# TYPE playline_http_request_duration_seconds histogram');
    for (const s of this.routes.values()) {
      const labels = `method="${s.method}",route="${escapeLabel(s.route)}"`;
      let cumulative = 0;
      BUCKETS.forEach((le, i) => {
        cumulative += s.buckets[i] as number;
        lines.push(`playline_http_request_duration_seconds_bucket{le="${le}",${labels}} ${cumulative}`);
      });
      lines.push(`playline_http_request_duration_seconds_bucket{le="+Inf",${labels}} ${s.count}`);
      lines.push(`playline_http_request_duration_seconds_sum{${labels}} ${s.sum}`);
      lines.push(`playline_http_request_duration_seconds_count{${labels}} ${s.count}`);
    }
    lines.push(
      '# HELP playline_http_connections_refused_total Connections refused because their client network held too many (PLAYLINE_MAX_CONNECTIONS_PER_ADDRESS)',
      '# TYPE playline_http_connections_refused_total counter',
      `playline_http_connections_refused_total ${this.connections?.refused() ?? 0}`,
      '# HELP playline_http_connections_dropped_total Connections closed unanswered because the instance held as many as it accepts (PLAYLINE_MAX_CONNECTIONS)',
      '# TYPE playline_http_connections_dropped_total counter',
      `playline_http_connections_dropped_total ${this.connections?.dropped() ?? 0}`,
    );
    if (this.connections) {
      lines.push(
        '# HELP playline_http_connections_limit Open connections the instance accepts at once (PLAYLINE_MAX_CONNECTIONS, or from the open-file limit)',
        '# TYPE playline_http_connections_limit gauge',
        `playline_http_connections_limit ${this.connections.cap}`,
      );
    }
    return `${lines.join('\n')}\n${await this.registry.metrics()}`;
  }
}

export function registerMetrics(app: App, metrics: Metrics): void {
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions;
    // A HEAD request shares its GET route's config: key it by route only when the methods agree.
    const key = route.url !== undefined && route.method === request.method ? route.config : undefined;
    metrics.observeRequest(request.method, route.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000, key);
    done();
  });
  app.get('/metrics', { config: { auth: 'none' }, schema: { hide: true } }, async (_request, reply) => {
    reply.type('text/plain; version=0.0.4; charset=utf-8');
    return metrics.render();
  });
}
