import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import ipaddr from 'ipaddr.js';

const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parse('2000::');

/**
 * Whether an address is one a live webhook may reach: public unicast only. Loopback, private
 * (RFC 1918, unique-local), link-local (cloud metadata at 169.254.169.254), carrier-grade NAT,
 * multicast, reserved and unspecified addresses are not. IPv6 must be global unicast (2000::/3)
 * outside the ranges that carry an IPv4 address to a translator or tunnel (6to4, Teredo), so the
 * IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::/96) forms of 127.0.0.1 or 169.254.169.254 are
 * refused; an IPv4-mapped address (::ffff:a.b.c.d) is judged as the IPv4 address it carries.
 */
export function isPublicAddress(address: string): boolean {
  let text = address;
  if (address.includes(':')) {
    // ipaddr.js reads "::a.b.c.d" as IPv4-mapped; the URL parser's form is the address connected to
    // (it refuses zone ids, which no public address has).
    if (!URL.canParse(`http://[${address}]`)) return false;
    text = new URL(`http://[${address}]`).hostname.slice(1, -1);
  }
  if (!ipaddr.isValid(text)) return false;
  const parsed = ipaddr.parse(text);
  if (parsed.kind() === 'ipv4') return parsed.range() === 'unicast';
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().range() === 'unicast';
  return v6.match(GLOBAL_UNICAST_V6, 3) && v6.range() === 'unicast';
}

// Names that never leave the machine or the site, whatever DNS says of them (RFC 6761, RFC 8375).
const LOCAL_NAME = /(^|\.)(localhost|local|localdomain|internal|home\.arpa)$/;

/**
 * Why a live webhook URL may not be used, or undefined: https only, no credentials, a written address
 * public (above), a name neither local nor a single label (trailing dots and case do not matter).
 * Names are resolved, and their addresses checked, at each connection (publicOnlyLookup).
 */
export function liveUrlProblem(url: URL): string | undefined {
  if (url.protocol !== 'https:') return 'must be an https URL for live endpoints';
  if (url.username || url.password) return 'must not carry credentials';
  const address = writtenAddress(url);
  const host = url.hostname.toLowerCase().replace(/\.+$/, '');
  if (address !== undefined ? !isPublicAddress(address) : (!host.includes('.') || LOCAL_NAME.test(host))) {
    return 'must reach a public address for live endpoints';
  }
  return undefined;
}

/** The IP address a URL names instead of a host name (connected to without any lookup), or undefined. */
export function writtenAddress(url: URL): string | undefined {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return host.includes(':') || /^[\d.]+$/.test(host) ? host : undefined;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A DNS lookup for the HTTP client that refuses non-public addresses, so the check happens on the
 * address actually connected to (a name that resolves to 127.0.0.1 at delivery time is refused even
 * if it resolved elsewhere when the endpoint was registered).
 */
export function publicOnlyLookup(hostname: string, options: object, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, []);
    const list = addresses as LookupAddress[];
    const refused = list.find((a) => !isPublicAddress(a.address));
    if (refused || list.length === 0) {
      const e = Object.assign(new Error(`${hostname} resolves to ${refused?.address ?? 'nothing'}, not a public address: refused`), { code: 'EADDRNOTPUBLIC' });
      return callback(e, []);
    }
    if ((options as { all?: boolean }).all) return callback(null, list);
    return callback(null, list[0]!.address, list[0]!.family);
  });
}
