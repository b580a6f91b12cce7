import ipaddr from 'ipaddr.js';

type IPv4 = ipaddr.IPv4;
type IPv6 = ipaddr.IPv6;

/**
 * Where an IP address points, as far as outbound requests are concerned.
 * `public` is the only class a callback may reach without an operator allow-list entry.
 */
export type AddressClass =
  | 'public'
  | 'loopback'
  | 'private'
  | 'unique_local'
  | 'link_local'
  | 'carrier_grade_nat'
  | 'multicast'
  | 'unspecified'
  | 'broadcast'
  | 'reserved'
  | 'metadata'
  | 'invalid';

export interface AddressVerdict {
  class: AddressClass;
  /** The address in canonical text form; IPv4-mapped/compatible IPv6 is reported as the IPv4 it embeds. */
  canonical: string;
}

/**
 * Cloud instance-metadata endpoints. Most already fall in link-local or CGNAT space; they are named
 * so the refusal says what they are, and Azure's wire server is public space that is still internal.
 */
const metadataAddresses = new Set([
  '169.254.169.254', // AWS, GCP, Azure IMDS, OpenStack
  '169.254.170.2', // AWS ECS task metadata
  '169.254.169.253', // AWS VPC DNS
  '168.63.129.16', // Azure wire server
  '100.100.100.200', // Alibaba Cloud
  '192.0.0.192', // Oracle Cloud
  'fd00:ec2::254', // AWS IMDS over IPv6
  'fd00:ec2::253', // AWS VPC DNS over IPv6
]);

const ipv4Classes: Record<string, AddressClass> = {
  unicast: 'public',
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
  linkLocal: 'link_local',
  loopback: 'loopback',
  carrierGradeNat: 'carrier_grade_nat',
  private: 'private',
};

const ipv6Classes: Record<string, AddressClass> = {
  unicast: 'public',
  unspecified: 'unspecified',
  linkLocal: 'link_local',
  multicast: 'multicast',
  loopback: 'loopback',
  uniqueLocal: 'unique_local',
  deprecatedSiteLocal: 'private',
};

const classifyIPv4 = (address: IPv4): AddressVerdict => {
  const canonical = address.toString();
  if (metadataAddresses.has(canonical)) return { class: 'metadata', canonical };
  return { class: ipv4Classes[address.range()] ?? 'reserved', canonical };
};

const embeddedIPv4 = (parts: number[], highIndex: number): IPv4 => {
  const high = parts[highIndex] ?? 0;
  const low = parts[highIndex + 1] ?? 0;
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
};

const classifyIPv6 = (address: IPv6): AddressVerdict => {
  const canonical = address.toString();
  if (metadataAddresses.has(canonical)) return { class: 'metadata', canonical };
  const parts = address.parts;
  const range = address.range();
  // Forms that carry an IPv4 address reach that IPv4 host, so they are judged by it:
  // mapped ::ffff:a.b.c.d, SIIT ::ffff:0:a.b.c.d, NAT64 64:ff9b::a.b.c.d, and 6to4 2002:AABB:CCDD::.
  if (range === 'ipv4Mapped' || range === 'rfc6145') return classifyIPv4(embeddedIPv4(parts, 6));
  if (range === 'rfc6052') {
    // Only the well-known /96 prefix embeds a global address; the RFC 8215 local-use /48 is internal.
    return parts[2] === 0 ? classifyIPv4(embeddedIPv4(parts, 6)) : { class: 'reserved', canonical };
  }
  if (range === '6to4') return classifyIPv4(embeddedIPv4(parts, 1));
  // IPv4-compatible ::a.b.c.d (deprecated, RFC 4291) is not a named range in ipaddr.js.
  if (range === 'unicast' && parts.slice(0, 6).every((p) => p === 0)) {
    return classifyIPv4(embeddedIPv4(parts, 6));
  }
  return { class: ipv6Classes[range] ?? 'reserved', canonical };
};

/** Parses an IP literal (IPv6 without brackets, zone ids refused) or returns undefined. */
export const parseIpLiteral = (text: string): IPv4 | IPv6 | undefined => {
  if (text.includes('%')) return undefined;
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return ipaddr.IPv4.parse(text);
  if (text.includes(':') && ipaddr.IPv6.isValid(text)) return ipaddr.IPv6.parse(text);
  return undefined;
};

/** How many leading bits of a client address name the network it is counted with. */
export interface ClientNetworkPrefixes {
  ipv4Prefix: number;
  ipv6Prefix: number;
}

/**
 * The network a client address is counted with, as CIDR text: the IPv4 /24 or the IPv6 /64 by
 * default (one host or one customer line usually has a whole /64, often several addresses of a
 * /24), so taking more source addresses from the same network does not buy more of a per-client
 * limit. An IPv4-mapped address (`::ffff:a.b.c.d`, what a dual-stack listener reports for an
 * IPv4 client) counts as the IPv4 address it carries. Text that is not an IP literal (an empty
 * remote address, a zone id) is returned as it is: its own group.
 */
export const clientNetworkOf = (text: string, prefixes: ClientNetworkPrefixes): string => {
  const parsed = parseIpLiteral(text);
  if (!parsed) return text;
  const address = parsed instanceof ipaddr.IPv6 && parsed.isIPv4MappedAddress() ? parsed.toIPv4Address() : parsed;
  const bits = address.kind() === 'ipv4' ? prefixes.ipv4Prefix : prefixes.ipv6Prefix;
  const bytes = address.toByteArray().map((byte, index) => {
    const kept = Math.max(0, Math.min(8, bits - index * 8));
    return byte & ((0xff << (8 - kept)) & 0xff);
  });
  return `${ipaddr.fromByteArray(bytes).toString()}/${bits}`;
};

/** Classifies an IP address given as text (as returned by DNS or written in a URL). */
export const classifyAddress = (text: string): AddressVerdict => {
  const address = parseIpLiteral(text);
  if (!address) return { class: 'invalid', canonical: text };
  return address.kind() === 'ipv4' ? classifyIPv4(address as IPv4) : classifyIPv6(address as IPv6);
};

/** Human wording of a class for refusal messages. */
export const describeAddressClass = (cls: AddressClass): string =>
  ({
    public: 'a public address',
    loopback: 'a loopback address',
    private: 'a private network address',
    unique_local: 'a unique local (private) IPv6 address',
    link_local: 'a link-local address',
    carrier_grade_nat: 'a carrier-grade NAT address',
    multicast: 'a multicast address',
    unspecified: 'the unspecified address',
    broadcast: 'the broadcast address',
    reserved: 'a reserved or special-purpose address',
    metadata: 'a cloud metadata service address',
    invalid: 'not a valid IP address',
  })[cls];
