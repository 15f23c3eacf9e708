import { isIPv4, isIPv6 } from 'node:net';

/**
 * Who a request to the HTTP gateway comes from, and the per-client limits kept for it: the host a Host header
 * names, the key a client's address is counted under (an IPv6 one by its /64), and token buckets by that key.
 */

/** Clients whose limits are remembered (about 100 bytes each); past this the least recently seen are forgotten. */
const MAX_TRACKED_CLIENTS = 10_000;

/**
 * The name or address a Host header names, lower-cased, without port or brackets; undefined unless the header
 * is a valid `host[:port]`. A name whose last label is a number is read as an IPv4 address, as URL parsers
 * read it, so `127.999.999.999` or `0x7f.1` are invalid rather than names.
 */
export function hostOfHeader(value: string): string | undefined {
  const parts = /^(?:\[([^\]]*)\]|([^:[\]]*))(?::(\d{1,5}))?$/.exec(value);
  if (!parts || (parts[3] !== undefined && Number(parts[3]) > 65_535)) return undefined;
  if (parts[1] !== undefined) return isIPv6(parts[1]) && !parts[1].includes('%') ? parts[1].toLowerCase() : undefined;
  const name = parts[2]!.toLowerCase().replace(/\.$/, '');
  if (name === '' || name.length > 253) return undefined;
  const labels = name.split('.');
  if (/^(?:0x[0-9a-f]*|\d+)$/.test(labels.at(-1)!)) return isIPv4(name) ? name : undefined;
  // Underscores are not DNS, but container and compose service names use them.
  return labels.every((label) => /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/.test(label)) ? name : undefined;
}

/**
 * The key a client's limits are kept under, from its address. IPv4-mapped addresses count as IPv4; IPv6
 * addresses count by their /64, since one host or line is usually given a whole /64 and could otherwise use a
 * fresh address for every request.
 */
export function clientKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (!isIPv6(address)) return address;
  return `${ipv6Groups(address).slice(0, 4).join(':')}::/64`;
}

/** The eight groups of an IPv6 address, `::` and a trailing dotted IPv4 part written out. */
function ipv6Groups(address: string): string[] {
  let text = address.toLowerCase().replace(/%.*$/, '');
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const front = head ? head.split(':') : [];
  if (tail === undefined) return front;
  const back = tail ? tail.split(':') : [];
  return [...front, ...Array<string>(8 - front.length - back.length).fill('0'), ...back].map((g) => parseInt(g, 16).toString(16));
}

/**
 * Token buckets by key: each holds up to `burst` and refills at `perSecond`; a key without one holds a full
 * bucket, so full buckets can be forgotten and the map stays small.
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly burst: number,
    private readonly perSecond: number,
    private readonly now: () => number,
  ) {}

  available(key: string): number {
    const bucket = this.buckets.get(key);
    return bucket ? Math.min(this.burst, bucket.tokens + ((this.now() - bucket.at) / 1000) * this.perSecond) : this.burst;
  }

  /** Spends `amount` if the bucket holds that much; otherwise spends nothing. */
  take(key: string, amount: number): boolean {
    const tokens = this.available(key);
    if (tokens < amount) return false;
    // Re-inserted at the end, so the map's order runs from least to most recently used.
    this.buckets.delete(key);
    this.buckets.set(key, { tokens: tokens - amount, at: this.now() });
    if (this.buckets.size > MAX_TRACKED_CLIENTS) this.prune();
    return true;
  }

  /** Whole seconds until the bucket holds `amount` (for Retry-After). */
  secondsUntil(key: string, amount: number): number {
    return Math.max(1, Math.ceil((amount - this.available(key)) / this.perSecond));
  }

  delete(key: string): void {
    this.buckets.delete(key);
  }

  private prune(): void {
    for (const key of this.buckets.keys()) if (this.available(key) >= this.burst) this.buckets.delete(key);
    for (const key of this.buckets.keys()) {
      if (this.buckets.size <= MAX_TRACKED_CLIENTS) break;
      this.buckets.delete(key);
    }
  }
}
