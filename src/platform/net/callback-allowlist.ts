import ipaddr from 'ipaddr.js';
import { parseIpLiteral } from './address-class.js';

/** Thrown at start-up when `PLAYLINE_OUTBOUND_ALLOWLIST` holds an entry that is neither a CIDR nor a host name. */
export class AllowListError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AllowListError';
  }
}

/**
 * Operator exceptions to the SSRF guard: networks (CIDRs or single addresses) whose addresses may be
 * reached, and host names (exact, or `*.example.com` for every subdomain) whose resolved addresses may be.
 */
export interface CallbackAllowList {
  /** The entries as written, for logs and diagnostics. */
  readonly entries: readonly string[];
  admitsAddress(address: string): boolean;
  admitsHost(hostname: string): boolean;
}

type Network = [ipaddr.IPv4 | ipaddr.IPv6, number];

const hostLabel = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

const normaliseHost = (host: string): string => host.toLowerCase().replace(/\.$/, '');

const isHostName = (host: string): boolean =>
  host.length <= 253 && host.split('.').every((label) => hostLabel.test(label));

const parseNetwork = (entry: string, position: number): Network => {
  const fail = (why: string): never => {
    throw new AllowListError(`PLAYLINE_OUTBOUND_ALLOWLIST entry ${position} "${entry}" ${why}`);
  };
  const slash = entry.indexOf('/');
  const addressText = slash === -1 ? entry : entry.slice(0, slash);
  const address = parseIpLiteral(addressText.replace(/^\[(.*)\]$/, '$1'));
  if (!address) return fail('is not a valid IP address or CIDR');
  const maxBits = address.kind() === 'ipv4' ? 32 : 128;
  if (slash === -1) return [address, maxBits];
  const prefixText = entry.slice(slash + 1);
  if (!/^\d{1,3}$/.test(prefixText)) return fail('has a prefix length that is not a number');
  const prefix = Number(prefixText);
  if (prefix > maxBits) return fail(`has prefix length ${prefix}, more than ${maxBits} bits`);
  return [address, prefix];
};

const toComparable = (address: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | ipaddr.IPv6 =>
  address instanceof ipaddr.IPv6 && address.isIPv4MappedAddress() ? address.toIPv4Address() : address;

/**
 * Parses the allow-list value: comma-separated CIDRs, IP addresses and host names; blanks are ignored.
 * Throws AllowListError naming the first bad entry, so a typo stops the start instead of silently
 * leaving the guard closed (or open).
 */
export const parseCallbackAllowList = (value: string | undefined): CallbackAllowList => {
  const entries = (value ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e.length > 0);
  const networks: Network[] = [];
  const exactHosts = new Set<string>();
  const hostSuffixes: string[] = [];
  entries.forEach((entry, index) => {
    const position = index + 1;
    const looksNumeric = /^[\d.]+(\/.*)?$/.test(entry) || entry.includes(':') || entry.includes('/');
    if (looksNumeric) {
      networks.push(parseNetwork(entry, position));
      return;
    }
    const host = normaliseHost(entry);
    if (host.startsWith('*.') && isHostName(host.slice(2))) {
      hostSuffixes.push(host.slice(1));
    } else if (isHostName(host)) {
      exactHosts.add(host);
    } else {
      throw new AllowListError(
        `PLAYLINE_OUTBOUND_ALLOWLIST entry ${position} "${entry}" is not a CIDR, IP address or host name`,
      );
    }
  });

  return {
    entries,
    admitsAddress(text) {
      const parsed = parseIpLiteral(text);
      if (!parsed) return false;
      const address = toComparable(parsed);
      return networks.some(([network, prefix]) => {
        const comparable = toComparable(network);
        const bits = comparable === network ? prefix : Math.max(0, prefix - 96);
        return comparable.kind() === address.kind() && address.match(comparable, bits);
      });
    },
    admitsHost(hostname) {
      const host = normaliseHost(hostname);
      return exactHosts.has(host) || hostSuffixes.some((suffix) => host.endsWith(suffix));
    },
  };
};

/** An allow-list that admits nothing (the production default). */
export const emptyAllowList: CallbackAllowList = parseCallbackAllowList('');
