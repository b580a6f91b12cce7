import { lookup } from 'node:dns/promises';
import type { Clock } from '../clock.js';
import { systemClock } from '../clock.js';
import { classifyAddress, describeAddressClass, parseIpLiteral } from './address-class.js';
import type { AddressClass } from './address-class.js';
import type { CallbackAllowList } from './callback-allowlist.js';
import { emptyAllowList } from './callback-allowlist.js';

/** One address a host name resolves to. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has; rejects when it has none. Injectable for tests. */
export interface HostResolver {
  resolve(hostname: string): Promise<ResolvedAddress[]>;
}

/** The system resolver (getaddrinfo through `dns.lookup`, so /etc/hosts applies as for any client). */
export const systemResolver: HostResolver = {
  async resolve(hostname) {
    const found = await lookup(hostname, { all: true, verbatim: true });
    return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
  },
};

export type SsrfRefusalReason = 'invalid_url' | 'unsupported_scheme' | 'unresolvable' | 'forbidden_address';

/** A URL the guard accepted, with the address every connection for it must be pinned to. */
export interface SsrfAdmitted {
  ok: true;
  url: URL;
  /** Host name as written in the URL (brackets removed for IPv6 literals). */
  hostname: string;
  address: string;
  family: 4 | 6;
  /** Whether an allow-list entry, rather than the address being public, let it through. */
  viaAllowList: boolean;
}

export interface SsrfRefused {
  ok: false;
  reason: SsrfRefusalReason;
  detail: string;
  /** The class of the refused address, for `forbidden_address`. */
  addressClass?: AddressClass;
}

export type SsrfCheck = SsrfAdmitted | SsrfRefused;

export interface SsrfGuardOptions {
  resolver?: HostResolver;
  allowList?: CallbackAllowList;
  clock?: Clock;
  /** A resolver that has not answered by then counts as unresolvable. Default 3000 ms. */
  resolveTimeoutMs?: number;
}

const refuse = (reason: SsrfRefusalReason, detail: string, addressClass?: AddressClass): SsrfRefused =>
  addressClass === undefined ? { ok: false, reason, detail } : { ok: false, reason, detail, addressClass };

/**
 * Decides whether an outbound request may go to a user-supplied URL: http(s) only, and every address
 * the host resolves to must be public unless the operator allow-list admits the host or the address.
 * Cloud metadata addresses are refused even when an allow-list entry covers them. The caller connects
 * to the returned address only (DNS pinning), so a second resolution cannot swap in an internal one.
 */
export class SsrfGuard {
  private readonly resolver: HostResolver;
  private readonly allowList: CallbackAllowList;
  private readonly clock: Clock;
  private readonly resolveTimeoutMs: number;

  constructor(options: SsrfGuardOptions = {}) {
    this.resolver = options.resolver ?? systemResolver;
    this.allowList = options.allowList ?? emptyAllowList;
    this.clock = options.clock ?? systemClock;
    this.resolveTimeoutMs = options.resolveTimeoutMs ?? 3000;
  }

  /** Never throws: every failure is a refusal with its reason. */
  async check(rawUrl: string): Promise<SsrfCheck> {
    let url: URL;
    try {
      url = new URL(rawUrl);
    } catch {
      return refuse('invalid_url', 'not an absolute URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      return refuse('unsupported_scheme', `scheme ${url.protocol.replace(/:$/, '')} is not allowed; use http or https`);
    }
    if (url.username !== '' || url.password !== '') {
      return refuse('invalid_url', 'credentials in the URL are not supported');
    }
    const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
    if (hostname === '') return refuse('invalid_url', 'the URL has no host');

    const literal = parseIpLiteral(hostname);
    let addresses: ResolvedAddress[];
    if (literal) {
      addresses = [{ address: hostname, family: literal.kind() === 'ipv4' ? 4 : 6 }];
    } else {
      const resolved = await this.resolve(hostname);
      if (typeof resolved === 'string') return refuse('unresolvable', resolved);
      addresses = resolved;
    }

    const hostAllowed = !literal && this.allowList.admitsHost(hostname);
    let viaAllowList = false;
    // Every address must pass: a host answering with one public and one internal address is refused,
    // since the choice between them would be the resolver's, not ours.
    for (const { address } of addresses) {
      const verdict = classifyAddress(address);
      if (verdict.class === 'public') continue;
      const neverAllowed = verdict.class === 'metadata' || verdict.class === 'invalid';
      if (!neverAllowed && (hostAllowed || this.allowList.admitsAddress(address))) {
        viaAllowList = true;
        continue;
      }
      const where = literal ? `${address} is` : `${hostname} resolves to ${address},`;
      return refuse('forbidden_address', `${where} ${describeAddressClass(verdict.class)}`, verdict.class);
    }
    const first = addresses[0];
    if (!first) return refuse('unresolvable', `${hostname} has no address`);
    return { ok: true, url, hostname, address: first.address, family: first.family, viaAllowList };
  }

  private async resolve(hostname: string): Promise<ResolvedAddress[] | string> {
    let cancelTimer = (): void => undefined;
    const timedOut = new Promise<string>((resolve) => {
      cancelTimer = this.clock.setTimer(() => resolve(`resolving ${hostname} timed out`), this.resolveTimeoutMs);
    });
    const resolved = this.resolver.resolve(hostname).then(
      (found) => (found.length > 0 ? found : `${hostname} has no address`),
      (error: unknown) => `${hostname} could not be resolved (${errorCode(error)})`,
    );
    try {
      return await Promise.race([resolved, timedOut]);
    } finally {
      cancelTimer();
    }
  }
}

const errorCode = (error: unknown): string => {
  if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string') {
    return error.code;
  }
  return error instanceof Error ? error.message : 'unknown error';
};
