import type { ClientRequest } from 'node:http';
import type { Clock } from '../../platform/clock.js';
import type { Destination, Outbound } from '../../platform/net/outbound.js';
import { platformTable } from './platform-table.js';
import { rtmpHandshake, type HandshakeFailure } from './rtmp-handshake.js';
import { parseStreamUrl } from './stream-forms.js';
import type { TargetCreateBody } from './syndication.schema.js';

/**
 * The target connection test (`PATCH /syndication-target-test/<id>`): an RTMP handshake for
 * rtmp and rtmps, an HTTP reachability check for hls-push, "not supported" for the rest (srt,
 * rist and zixi run over UDP or proprietary transports; an hls pull target has nothing to
 * connect to). Never throws; results name host:port only, never the stream key or URL path.
 */
export type ProbeFailure = HandshakeFailure | 'blocked' | 'http_error';

export type ProbeResult =
  | { outcome: 'passed'; endpoint: string; detail: string }
  | { outcome: 'failed'; reason: ProbeFailure; endpoint: string; detail: string }
  | { outcome: 'not_supported'; detail: string };

export interface ProbeOptions {
  clock: Clock;
  /** Overall limit for address check, connection and handshake. Default 5000 ms. */
  timeoutMs?: number;
  /** The outbound layer: the probe connects only where its guard admits, pinned. */
  outbound: Outbound;
  /** Extra trust roots for rtmps and https (tests). */
  ca?: string;
}

export interface ProbeEndpoint {
  scheme: 'rtmp' | 'rtmps' | 'http' | 'https';
  host: string;
  port: number;
  path: string;
}

const DEFAULT_PORTS: Record<ProbeEndpoint['scheme'], number> = { rtmp: 1935, rtmps: 443, http: 80, https: 443 };

/** Where the test connects for a target, or why there is nothing to test. */
export function probeEndpoint(target: TargetCreateBody): ProbeEndpoint | { unsupported: string } {
  const { platform, target_protocol: protocol } = target;
  let url: string | undefined;
  if (platform === 'Custom') {
    if (protocol !== 'rtmp' && protocol !== 'rtmps' && protocol !== 'hls-push') {
      return { unsupported: `the connection test does not support ${protocol} targets` };
    }
    url = target.target_stream;
  } else if (target.platform_config?.integrated === true) {
    return { unsupported: `integrated ${platform} publishing uses the platform's API, not a stream endpoint` };
  } else {
    url = platformTable[platform].ingest;
    if (!url) return { unsupported: `${platform} gives each stream its own ingest; there is no fixed endpoint to test` };
  }
  const parsed = url === undefined ? undefined : parseStreamUrl(url);
  const scheme = parsed?.scheme;
  if (!parsed || (scheme !== 'rtmp' && scheme !== 'rtmps' && scheme !== 'http' && scheme !== 'https')) {
    return { unsupported: 'the target has no stream URL to test' };
  }
  const host = parsed.host.replace(/^\[(.*)\]$/, '$1');
  return { scheme, host, port: parsed.port ?? DEFAULT_PORTS[scheme], path: parsed.path || '/' };
}

export async function probeTarget(target: TargetCreateBody, options: ProbeOptions): Promise<ProbeResult> {
  const endpoint = probeEndpoint(target);
  if ('unsupported' in endpoint) return { outcome: 'not_supported', detail: endpoint.unsupported };
  const { clock } = options;
  const timeoutMs = options.timeoutMs ?? 5000;
  const started = clock.now();
  const where = `${endpoint.host.includes(':') ? `[${endpoint.host}]` : endpoint.host}:${endpoint.port}`;
  const failed = (reason: ProbeFailure, detail: string): ProbeResult => ({ outcome: 'failed', reason, endpoint: where, detail });

  const verdict = await withTimeout(options.outbound.admit(endpoint.host, endpoint.port), clock, timeoutMs);
  if (verdict === undefined) return failed('timeout', `checking the address of ${where} took longer than ${timeoutMs} ms`);
  if (!verdict.ok) return failed('blocked', `not allowed to connect to ${where}: ${verdict.detail}`);
  const { destination } = verdict;
  const remaining = Math.max(1, timeoutMs - (clock.now() - started));

  if (endpoint.scheme === 'rtmp' || endpoint.scheme === 'rtmps') {
    const result = await rtmpHandshake(
      { tls: endpoint.scheme === 'rtmps', destination, ...(options.ca ? { ca: options.ca } : {}) },
      options.outbound,
      clock,
      remaining,
    );
    return result.ok ? { outcome: 'passed', endpoint: where, detail: `${result.detail} with ${where}` } : failed(result.reason, `${result.detail} (${where})`);
  }
  return httpReachability(endpoint, where, { clock, timeoutMs: remaining, outbound: options.outbound, destination, ...(options.ca ? { ca: options.ca } : {}) });
}

interface HttpProbeOptions {
  clock: Clock;
  timeoutMs: number;
  outbound: Outbound;
  destination: Destination;
  ca?: string;
}

/** A HEAD to the push base URL; any answer below 500 shows a live HTTP server there. Redirects are not followed. */
function httpReachability(endpoint: ProbeEndpoint, where: string, options: HttpProbeOptions): Promise<ProbeResult> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: ProbeResult) => {
      if (settled) return;
      settled = true;
      cancelTimer();
      req.destroy();
      resolve(result);
    };
    const fail = (reason: ProbeFailure, detail: string) => finish({ outcome: 'failed', reason, endpoint: where, detail });
    const cancelTimer = options.clock.setTimer(() => fail('timeout', `no HTTP answer from ${where} within ${options.timeoutMs} ms`), options.timeoutMs);
    const url = new URL(`${endpoint.scheme}://${where}${endpoint.path.startsWith('/') ? '' : '/'}${endpoint.path}`);
    const req: ClientRequest = options.outbound.request(options.destination, url, {
      method: 'HEAD',
      agent: false,
      headers: { 'user-agent': 'playline-target-test' },
      ...(options.ca ? { ca: options.ca } : {}),
    });
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      res.resume();
      if (status < 500) finish({ outcome: 'passed', endpoint: where, detail: `HTTP ${status} from ${where}` });
      else fail('http_error', `HTTP ${status} from ${where}`);
    });
    req.on('error', (error: NodeJS.ErrnoException) => {
      const code = error.code ?? 'error';
      if (code === 'ECONNREFUSED') return fail('refused', `connection refused by ${where}`);
      if (/CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO/.test(code)) return fail('tls_error', `TLS handshake with ${where} failed (${code})`);
      if (code === 'ECONNRESET') return fail('reset', `${where} reset the connection`);
      fail('unreachable', `could not reach ${where} (${code})`);
    });
    req.end();
  });
}

/** The promise's value, or undefined when the clock runs out first. */
async function withTimeout<T>(promise: Promise<T>, clock: Clock, ms: number): Promise<T | undefined> {
  let cancel = (): void => undefined;
  const timedOut = new Promise<undefined>((resolve) => {
    cancel = clock.setTimer(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([promise, timedOut]);
  } finally {
    cancel();
  }
}
