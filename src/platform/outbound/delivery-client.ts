import { EventEmitter } from 'node:events';
import type { Dispatcher, Pool } from 'undici';
import type { Clock } from '../clock.js';
import { systemClock } from '../clock.js';
import type { Destination, Outbound } from '../net/outbound.js';
import type { SsrfRefusalReason } from '../net/ssrf-guard.js';
import type { DeliveryOutcome } from './delivery-outcome.js';
import { classifyTransportError } from './delivery-outcome.js';

/** A signed callback request: the exact body and the headers that go with it. */
export interface CallbackRequest {
  body: string;
  headers: Record<string, string>;
}

/** The delivery port the dispatcher uses; `CallbackClient` is the real one. Never rejects. */
export interface CallbackTransport {
  deliver(url: string, request: CallbackRequest): Promise<DeliveryOutcome>;
}

/** What a settings test observed, shown to the user when the test fails. */
export interface CallbackObservation extends DeliveryOutcome {
  /** The address the request went to (after the SSRF guard), when it got that far. */
  address?: string;
  /** Start of the response body, for a receiver's own error message. */
  responseExcerpt?: string;
  /** Why the SSRF guard refused the URL, for `ssrf_refused`. */
  refusal?: SsrfRefusalReason;
}

/** The settings test's port: one fresh, unpooled request. `CallbackClient` is the real one. */
export interface CallbackTester {
  testCallback(url: string, request: CallbackRequest): Promise<CallbackObservation>;
}

export interface CallbackClientOptions {
  /** The outbound layer: the guard and the pinned connections are its. */
  outbound: Outbound;
  clock?: Clock;
  /** Whole-request timeout (connect, headers, body). Default 5000 ms. */
  timeoutMs?: number;
  /** Keep-alive connections per endpoint. Default 32. */
  connectionsPerEndpoint?: number;
  /** How long a guard verdict (and the pinned address) is reused before DNS is checked again. Default 60 s. */
  recheckMs?: number;
  /** Endpoints with a pool at once; the least recently used pool is closed beyond it. Default 1000. */
  maxEndpoints?: number;
}

interface Admitted {
  url: URL;
  destination: Destination;
}

interface EndpointPool {
  pool: Dispatcher;
  admitted: Admitted;
  checkedAt: number;
}

const baseHeaders = { 'content-type': 'application/json', 'user-agent': 'Playline-Callbacks/1.0' };
const excerptBytes = 256;

/**
 * POSTs callback reports with undici: one keep-alive pool per endpoint, every connection pinned to the
 * address the SSRF guard admitted, redirects never followed (a 3xx is simply not a 200).
 */
export class CallbackClient implements CallbackTransport, CallbackTester {
  private readonly outbound: Outbound;
  private readonly clock: Clock;
  private readonly timeoutMs: number;
  private readonly connections: number;
  private readonly recheckMs: number;
  private readonly maxEndpoints: number;
  private readonly pools = new Map<string, EndpointPool>();
  private readonly checks = new Map<string, Promise<EndpointPool | DeliveryOutcome>>();

  constructor(options: CallbackClientOptions) {
    this.outbound = options.outbound;
    this.clock = options.clock ?? systemClock;
    this.timeoutMs = options.timeoutMs ?? 5000;
    this.connections = options.connectionsPerEndpoint ?? 32;
    this.recheckMs = options.recheckMs ?? 60_000;
    this.maxEndpoints = options.maxEndpoints ?? 1000;
  }

  async deliver(url: string, request: CallbackRequest): Promise<DeliveryOutcome> {
    const cached = this.pools.get(url);
    const endpoint =
      cached && this.clock.now() - cached.checkedAt < this.recheckMs ? cached : await this.admit(url);
    if (!('pool' in endpoint)) return endpoint;
    // Map order is the eviction order: touching moves the endpoint to the most recent end.
    this.pools.delete(url);
    this.pools.set(url, endpoint);
    const observed = await this.send(endpoint.pool, endpoint.admitted.url, request, 0);
    return observed;
  }

  /**
   * One request on a fresh connection, with a fresh guard check and nothing cached: the test that must
   * pass before a callback URL is saved. Never rejects.
   */
  async testCallback(url: string, request: CallbackRequest): Promise<CallbackObservation> {
    const admitted = await this.outbound.admitUrl(url);
    if (!admitted.ok) {
      return { outcome: 'ssrf_refused', status: null, latencyMs: 0, detail: admitted.detail, refusal: admitted.reason };
    }
    const client = this.outbound.dispatcher(admitted.destination, admitted.url.origin, { ...this.dispatcherOptions(), pool: false });
    try {
      const observed = await this.send(client, admitted.url, request, excerptBytes);
      return { ...observed, address: admitted.destination.address };
    } finally {
      void client.destroy().catch(() => undefined);
    }
  }

  /** Closes every pool; in-flight requests end as resets. */
  async close(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((p) => p.pool.destroy().catch(() => undefined)));
  }

  /** Number of endpoint pools held (bounded by `maxEndpoints`). */
  get endpointCount(): number {
    return this.pools.size;
  }

  private admit(url: string): Promise<EndpointPool | DeliveryOutcome> {
    // Concurrent deliveries to one endpoint share one guard check.
    const pending = this.checks.get(url);
    if (pending) return pending;
    const check = this.outbound.admitUrl(url).then((admitted): EndpointPool | DeliveryOutcome => {
      this.checks.delete(url);
      const previous = this.pools.get(url);
      if (!admitted.ok) {
        if (previous) this.retire(url, previous);
        return { outcome: 'ssrf_refused', status: null, latencyMs: 0, detail: admitted.detail };
      }
      if (previous && previous.admitted.destination.address === admitted.destination.address) {
        previous.checkedAt = this.clock.now();
        return previous;
      }
      if (previous) this.retire(url, previous);
      const endpoint: EndpointPool = {
        pool: this.outbound.dispatcher(admitted.destination, admitted.url.origin, { ...this.dispatcherOptions(), connections: this.connections }),
        admitted: { url: admitted.url, destination: admitted.destination },
        checkedAt: this.clock.now(),
      };
      this.pools.set(url, endpoint);
      this.evictBeyondLimit();
      return endpoint;
    }, (error: unknown): DeliveryOutcome => {
      this.checks.delete(url);
      return { outcome: 'ssrf_refused', status: null, latencyMs: 0, detail: `guard failed: ${String(error)}` };
    });
    this.checks.set(url, check);
    return check;
  }

  private retire(url: string, endpoint: EndpointPool): void {
    if (this.pools.get(url) === endpoint) this.pools.delete(url);
    // close() lets requests already on the pool finish.
    void endpoint.pool.close().catch(() => undefined);
  }

  private evictBeyondLimit(): void {
    for (const [url, endpoint] of this.pools) {
      if (this.pools.size <= this.maxEndpoints) break;
      this.retire(url, endpoint);
    }
  }

  /** The outbound layer pins every connection to the admitted address; these are the timeouts. */
  private dispatcherOptions(): Pool.Options {
    return {
      connect: { timeout: this.timeoutMs },
      // The clock-driven abort below is the timeout; undici's own timers are only a backstop.
      headersTimeout: this.timeoutMs * 2,
      bodyTimeout: this.timeoutMs * 2,
      keepAliveTimeout: 10_000,
      pipelining: 1,
    };
  }

  private async send(
    dispatcher: Dispatcher,
    url: URL,
    request: CallbackRequest,
    excerptLimit: number,
  ): Promise<CallbackObservation> {
    const started = this.clock.now();
    // undici accepts an EventEmitter as the abort signal; it costs far less per request than an
    // AbortController, whose EventTarget listeners showed up in the delivery benchmark's profile.
    const abort = new EventEmitter();
    let timedOut = false;
    const cancelTimer = this.clock.setTimer(() => {
      timedOut = true;
      abort.emit('abort');
    }, this.timeoutMs);
    let status: number | null = null;
    let latencyMs = 0;
    try {
      const response = await dispatcher.request({
        origin: url.origin,
        path: url.pathname + url.search,
        method: 'POST',
        headers: { ...baseHeaders, ...request.headers },
        body: request.body,
        signal: abort,
      });
      status = response.statusCode;
      latencyMs = this.clock.now() - started;
      const responseExcerpt = excerptLimit > 0 ? await readExcerpt(response.body, excerptLimit) : undefined;
      if (excerptLimit === 0) await response.body.dump({ limit: 64 * 1024 });
      if (status === 200) return { outcome: 'delivered', status, latencyMs };
      const location = response.headers.location;
      const detail =
        status >= 300 && status < 400 && location !== undefined
          ? `redirect to ${String(location)} not followed`
          : `HTTP ${status}`;
      return responseExcerpt ? { outcome: 'non_200', status, latencyMs, detail, responseExcerpt } : { outcome: 'non_200', status, latencyMs, detail };
    } catch (error) {
      const elapsed = latencyMs || this.clock.now() - started;
      if (timedOut) return { outcome: 'timeout', status, latencyMs: elapsed, detail: `no complete answer within ${this.timeoutMs} ms` };
      // A status arrived but the body failed: the receiver answered, so its status stands.
      if (status === 200) return { outcome: 'delivered', status, latencyMs: elapsed };
      if (status !== null) return { outcome: 'non_200', status, latencyMs: elapsed, detail: `HTTP ${status}` };
      return { ...classifyTransportError(error), status: null, latencyMs: elapsed };
    } finally {
      cancelTimer();
    }
  }
}

const readExcerpt = async (body: Dispatcher.ResponseData['body'], limit: number): Promise<string> => {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
    chunks.push(buffer);
    size += buffer.length;
    if (size >= limit) {
      body.destroy();
      break;
    }
  }
  // Control characters are removed so the excerpt is safe to show in JSON and logs.
  return Buffer.concat(chunks).subarray(0, limit).toString('utf8').replace(/[\p{Cc}\uFFFD]/gu, ' ').trim();
};
