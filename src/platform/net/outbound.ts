import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { request as httpRequest, type ClientRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect as connectTcp, type Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';
import { Client, Pool, type Dispatcher } from 'undici';
import type { Clock } from '../clock.js';
import { ConfigError, type Config } from '../config.js';
import type { AddressClass } from './address-class.js';
import { AllowListError, emptyAllowList, parseCallbackAllowList, type CallbackAllowList } from './callback-allowlist.js';
import { pinnedLookup } from './pinned-lookup.js';
import { SsrfGuard, systemResolver, type HostResolver, type SsrfRefusalReason } from './ssrf-guard.js';

/**
 * A destination the outbound guard admitted: the host as written, and the one address every
 * connection to it is pinned to. Only `Outbound.admit`/`admitUrl` make one; the connectors refuse
 * any other (a hand-made object is `OutboundRefused`, as Svix's client answers `BlockedIp`).
 */
export interface Destination {
  readonly host: string;
  readonly port: number;
  readonly address: string;
  readonly family: 4 | 6;
  /** An allow-list entry, not the address being public, let it through. */
  readonly viaAllowList: boolean;
}

export interface Refusal {
  ok: false;
  reason: SsrfRefusalReason;
  detail: string;
  addressClass?: AddressClass;
}

export type Admission = { ok: true; destination: Destination } | Refusal;
/** An admitted http(s) URL: the URL (credentials refused) and where it goes. */
export type UrlAdmission = { ok: true; url: URL; destination: Destination } | Refusal;

export interface TlsOptions {
  /** SNI and certificate name; default the destination's host when it is a name. */
  servername?: string;
  /** Extra trust roots (tests). */
  ca?: string;
}

/** A connector was handed a destination this outbound layer did not admit. */
export class OutboundRefused extends Error {
  constructor(what: string) {
    super(`outbound connection refused: ${what} was not admitted by the outbound guard`);
    this.name = 'OutboundRefused';
  }
}

/**
 * The only way out of the process (issue 42, Svix's webhook client is the anchor): every
 * connection to somewhere a user named goes through here, and each connector takes a `Destination`
 * the SSRF guard admitted, pinned to the address it checked (no second DNS answer can swap in an
 * internal one). Modules receive this object; they never see a check they could skip or replace.
 */
export interface Outbound {
  /** The operator's exceptions (PLAYLINE_OUTBOUND_ALLOWLIST), for a worker thread that builds its own. */
  readonly allowList: CallbackAllowList;
  /** Whether DNS is the system's (a worker thread can only rebuild this layer then). */
  readonly systemDns: boolean;
  /** May a connection go to `host:port` (any protocol)? Never throws. */
  admit(host: string, port: number): Promise<Admission>;
  /** May a request go to this http(s) URL? Never throws. */
  admitUrl(url: string): Promise<UrlAdmission>;
  /** A TCP (or, with `tls`, TLS) connection to the destination's pinned address. */
  connect(to: Destination, tls?: TlsOptions | false): Socket;
  /** One node:http(s) request to `url` (whose host the destination admitted), pinned. */
  request(to: Destination, url: URL, options: RequestOptions & { ca?: string }): ClientRequest;
  /** An undici dispatcher for `origin`: a keep-alive pool, or with `pool: false` a single connection. */
  dispatcher(to: Destination, origin: string, options: Pool.Options & { pool?: boolean }): Dispatcher;
  /** A UDP socket connected to the destination (its `connect` callback fires once it is). */
  udp(to: Destination, connected: () => void): UdpSocket;
  /**
   * The output URL for ffmpeg when it must connect itself (RIST pairs ports, so it has no relay):
   * the checked address as a literal, never a name ffmpeg would resolve again.
   */
  ffmpegUrl(scheme: 'rist' | 'srt', to: Destination): string;
}

export interface OutboundOptions {
  allowList?: CallbackAllowList;
  /** DNS (tests answer from a table). Default: the system resolver. */
  resolver?: HostResolver;
  clock?: Clock;
  resolveTimeoutMs?: number;
}

const bracket = (host: string): string => (host.includes(':') ? `[${host}]` : host);
const isIpLiteral = (host: string): boolean => /^[\d.]+$/.test(host) || host.includes(':');

export function createOutbound(options: OutboundOptions = {}): Outbound {
  const allowList = options.allowList ?? emptyAllowList;
  const guard = new SsrfGuard({
    allowList,
    ...(options.resolver ? { resolver: options.resolver } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.resolveTimeoutMs !== undefined ? { resolveTimeoutMs: options.resolveTimeoutMs } : {}),
  });
  // Destinations this instance made: the connectors take no other.
  const issued = new WeakSet<Destination>();
  const issue = (host: string, port: number, address: string, family: 4 | 6, viaAllowList: boolean): Destination => {
    const destination: Destination = Object.freeze({ host, port, address, family, viaAllowList });
    issued.add(destination);
    return destination;
  };
  const checked = (to: Destination): Destination => {
    if (!issued.has(to)) throw new OutboundRefused(`${bracket(String(to.host))}:${String(to.port)}`);
    return to;
  };
  const refusal = (r: { reason: SsrfRefusalReason; detail: string; addressClass?: AddressClass }): Refusal =>
    r.addressClass === undefined ? { ok: false, reason: r.reason, detail: r.detail } : { ok: false, reason: r.reason, detail: r.detail, addressClass: r.addressClass };

  return {
    allowList,
    systemDns: options.resolver === undefined || options.resolver === systemResolver,
    async admit(host, port) {
      const bare = host.replace(/^\[(.*)\]$/, '$1');
      if (!Number.isInteger(port) || port < 1 || port > 65535) return { ok: false, reason: 'invalid_url', detail: `port ${port} is not a port` };
      const verdict = await guard.check(`http://${bracket(bare)}:${port}/`);
      if (!verdict.ok) return refusal(verdict);
      return { ok: true, destination: issue(bare, port, verdict.address, verdict.family, verdict.viaAllowList) };
    },
    async admitUrl(url) {
      const verdict = await guard.check(url);
      if (!verdict.ok) return refusal(verdict);
      const port = verdict.url.port === '' ? (verdict.url.protocol === 'https:' ? 443 : 80) : Number(verdict.url.port);
      return { ok: true, url: verdict.url, destination: issue(verdict.hostname, port, verdict.address, verdict.family, verdict.viaAllowList) };
    },
    connect(to, tls) {
      const { host, port, address, family } = checked(to);
      const common = { host, port, lookup: pinnedLookup(address, family) };
      if (!tls) return connectTcp(common);
      return connectTls({ ...common, servername: tls.servername ?? (isIpLiteral(host) ? '' : host), ...(tls.ca ? { ca: tls.ca } : {}) });
    },
    request(to, url, requestOptions) {
      const { address, family } = checked(to);
      const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
      return send(url, { ...requestOptions, lookup: pinnedLookup(address, family) });
    },
    dispatcher(to, origin, { pool = true, connect, ...rest }) {
      const { address, family } = checked(to);
      const pinned = { ...(typeof connect === 'object' && connect !== null ? connect : {}), lookup: pinnedLookup(address, family) };
      return pool ? new Pool(origin, { ...rest, connect: pinned }) : new Client(origin, { ...rest, connect: pinned });
    },
    udp(to, connected) {
      const { address, family, port } = checked(to);
      const socket = createSocket(family === 6 ? 'udp6' : 'udp4');
      socket.connect(port, address, connected);
      return socket;
    },
    ffmpegUrl(scheme, to) {
      const { address, port } = checked(to);
      return `${scheme}://${bracket(address)}:${port}`;
    },
  };
}

/** The process's outbound layer from its settings; a bad allow-list entry stops the start with its reason. */
export function outboundOf(config: Pick<Config, 'outboundAllowlist'>, clock: Clock, resolver?: HostResolver): Outbound {
  let allowList: CallbackAllowList;
  try {
    allowList = parseCallbackAllowList(config.outboundAllowlist);
  } catch (error) {
    if (error instanceof AllowListError) throw new ConfigError(error.message);
    throw error;
  }
  return createOutbound({ allowList, clock, ...(resolver ? { resolver } : {}) });
}
