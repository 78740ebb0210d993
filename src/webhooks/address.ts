/**
 * Where a webhook may deliver. Unless SERVICE_WEBHOOK_ALLOW_PRIVATE is set, destinations on
 * loopback, private, shared (CGNAT), link-local, unspecified, multicast, reserved or cloud
 * metadata addresses are refused: literally at registration (IP literals and `localhost`
 * names), and by the resolved address at delivery time (a DNS lookup that only answers such
 * addresses fails the attempt before any connection is made, see `guardedLookup`).
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';

export const MAX_URL_LENGTH = 2048;

export type AddressClass = 'loopback' | 'private' | 'shared' | 'link-local' | 'unspecified' | 'metadata' | 'multicast' | 'reserved';

function v4Number(ip: string): number {
  const p = ip.split('.').map(Number);
  return ((p[0] << 24) >>> 0) + (p[1] << 16) + (p[2] << 8) + p[3];
}

function inV4(n: number, base: string, bits: number): boolean {
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return ((n & mask) >>> 0) === ((v4Number(base) & mask) >>> 0);
}

function classifyV4Number(n: number): AddressClass | null {
  if (n === v4Number('169.254.169.254') || n === v4Number('100.100.100.200') || n === v4Number('192.0.0.192')) return 'metadata';
  if (inV4(n, '0.0.0.0', 8)) return 'unspecified';
  if (inV4(n, '127.0.0.0', 8)) return 'loopback';
  if (inV4(n, '10.0.0.0', 8) || inV4(n, '172.16.0.0', 12) || inV4(n, '192.168.0.0', 16)) return 'private';
  if (inV4(n, '100.64.0.0', 10)) return 'shared';
  if (inV4(n, '169.254.0.0', 16)) return 'link-local';
  if (inV4(n, '224.0.0.0', 4)) return 'multicast';
  if (
    inV4(n, '240.0.0.0', 4) || // reserved, incl. 255.255.255.255
    inV4(n, '192.0.0.0', 24) || // IETF protocol assignments
    inV4(n, '192.0.2.0', 24) ||
    inV4(n, '198.51.100.0', 24) ||
    inV4(n, '203.0.113.0', 24) || // documentation
    inV4(n, '198.18.0.0', 15) // benchmarking
  ) {
    return 'reserved';
  }
  return null;
}

/** Eight 16-bit groups, or null when `ip` is not IPv6 text. */
function v6Groups(ip: string): number[] | null {
  let s = ip;
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  const lastColon = s.lastIndexOf(':');
  const last = s.slice(lastColon + 1);
  if (last.includes('.')) {
    // "::ffff:1.2.3.4" → "::ffff:102:304"
    if (isIP(last) !== 4) return null;
    const n = v4Number(last);
    s = `${s.slice(0, lastColon + 1)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const head = parse(halves[0]);
  const rest = halves.length === 2 ? parse(halves[1]) : [];
  const known = head.length + rest.length;
  if (halves.length === 1 && known !== 8) return null;
  if (known > 8) return null;
  const groups = [...head, ...new Array(halves.length === 2 ? 8 - known : 0).fill(0), ...rest];
  if (groups.length !== 8 || groups.some((g) => !Number.isInteger(g) || g < 0 || g > 0xffff)) return null;
  return groups;
}

function classifyV6(ip: string): AddressClass | null {
  const g = v6Groups(ip);
  if (!g) return 'reserved';
  const v4At = (i: number) => ((g[i] << 16) >>> 0) + g[i + 1];
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 8)) return 'unspecified';
  if (zeros(0, 7) && g[7] === 1) return 'loopback';
  if (zeros(0, 5) && g[5] === 0xffff) return classifyV4Number(v4At(6)); // IPv4-mapped
  if (zeros(0, 6)) return classifyV4Number(v4At(6)); // IPv4-compatible (deprecated)
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return classifyV4Number(v4At(6)); // NAT64
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) return 'private'; // local-use NAT64
  if (g[0] === 0x2002) return classifyV4Number(v4At(1)); // 6to4
  if (g[0] === 0xfd00 && g[1] === 0x0ec2 && zeros(2, 7) && g[7] === 0x254) return 'metadata'; // AWS IMDS over IPv6
  if ((g[0] & 0xfe00) === 0xfc00) return 'private'; // unique local fc00::/7
  if ((g[0] & 0xffc0) === 0xfe80) return 'link-local'; // fe80::/10
  if ((g[0] & 0xffc0) === 0xfec0) return 'private'; // site-local (deprecated)
  if ((g[0] & 0xff00) === 0xff00) return 'multicast';
  if (g[0] === 0x0100 && zeros(1, 4)) return 'reserved'; // discard-only 100::/64
  if (g[0] === 0x2001 && g[1] === 0x0db8) return 'reserved'; // documentation
  return null;
}

/** The class of a non-public IP address, or null when it is public (or not an IP at all). */
export function classifyAddress(ip: string): AddressClass | null {
  const v = isIP(ip);
  if (v === 4) return classifyV4Number(v4Number(ip));
  if (v === 6) return classifyV6(ip);
  return null;
}

const REFUSED_NAMES = new Set(['localhost', 'localhost.localdomain', 'ip6-localhost', 'ip6-loopback', 'metadata', 'metadata.google.internal', 'metadata.goog', 'instance-data', 'instance-data.ec2.internal']);

/** A URL's hostname without IPv6 brackets or a trailing dot, lower case. */
export function bareHost(hostname: string): string {
  let h = hostname.toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (h.endsWith('.')) h = h.slice(0, -1);
  return h;
}

/** Why the literal host of a URL is refused as a destination, or null. */
export function refusedHost(hostname: string): string | null {
  const h = bareHost(hostname);
  if (isIP(h)) {
    const c = classifyAddress(h);
    return c ? `${h} is a ${c} address` : null;
  }
  if (REFUSED_NAMES.has(h) || h.endsWith('.localhost')) return `${h} names a loopback or metadata host`;
  return null;
}

/**
 * Validates a webhook URL; returns the problem (for a 422 on `url`) or null.
 * Absolute http(s), at most 2048 characters, no credentials, no whitespace or control
 * characters, and (unless `allowPrivate`) no private destination.
 */
export function checkWebhookUrl(raw: string, allowPrivate: boolean): string | null {
  if (raw.length === 0) return 'must not be empty';
  if (raw.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters`;
  // eslint-disable-next-line no-control-regex
  if (/[\s\u0000-\u001f\u007f]/.test(raw)) return 'must not contain whitespace or control characters';
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return 'must be an absolute http or https URL';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'must be an absolute http or https URL';
  if (u.username !== '' || u.password !== '') return 'must not contain credentials (user:password@)';
  if (u.hostname === '') return 'must name a host';
  if (!allowPrivate) {
    const why = refusedHost(u.hostname);
    if (why) return `private, loopback, link-local and metadata destinations are refused: ${why}`;
  }
  return null;
}

export class PrivateAddressError extends Error {
  readonly code = 'EPRIVATEADDR';
  constructor(message: string) {
    super(message);
    this.name = 'PrivateAddressError';
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
type Resolver = (hostname: string, options: LookupOptions & { all: true }, cb: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void;

/**
 * A `dns.lookup` replacement for net/tls `connect` (undici `connect.lookup`) that drops
 * non-public answers and fails when none is left, so a name that resolves to 127.0.0.1 (or
 * is re-pointed there later) is never connected to. Answers are filtered rather than refused
 * outright: only public addresses are ever handed to connect.
 */
export function guardedLookup(resolver: Resolver = dnsLookup as unknown as Resolver) {
  return function lookup(hostname: string, options: LookupOptions | LookupCallback, callback?: LookupCallback): void {
    let opts: LookupOptions = {};
    let cb = callback as LookupCallback;
    if (typeof options === 'function') cb = options;
    else if (typeof options === 'number') opts = { family: options };
    else opts = options ?? {};
    resolver(hostname, { ...opts, all: true }, (err, addresses) => {
      if (err) return cb(err, opts.all ? [] : '');
      const allowed = addresses.filter((a) => classifyAddress(a.address) === null);
      if (allowed.length === 0) {
        const first = addresses[0];
        const why = first ? `${hostname} resolves to ${first.address}, a ${classifyAddress(first.address)} address` : `${hostname} has no address`;
        return cb(new PrivateAddressError(`destination refused: ${why}`), opts.all ? [] : '');
      }
      if (opts.all) cb(null, allowed);
      else cb(null, allowed[0].address, allowed[0].family);
    });
  };
}
