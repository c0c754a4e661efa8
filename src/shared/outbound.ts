/**
 * The outbound address rule of decisions.md: webhook and intent URLs must be http(s) and must not
 * reach loopback, private, link-local or metadata addresses unless OUTBOUND_ALLOWLIST lists them
 * (CIDRs or host names). Checked at registration and again before every call.
 */
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";

const BLOCKED_V4: Array<[string, number]> = [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
];
const BLOCKED_V6: Array<[string, number]> = [
  ["::", 128],
  ["::1", 128],
  ["fc00::", 7],
  ["fe80::", 10],
  ["ff00::", 8],
  ["fd00:ec2::254", 128],
];
/** Names judged without DNS, by the address they stand for (metadata names are not loopback). */
const BLOCKED_NAMES = new Map([
  ["localhost", "127.0.0.1"],
  ["metadata.google.internal", "169.254.169.254"],
  ["metadata", "169.254.169.254"],
]);

function v4ToBigInt(ip: string): bigint {
  return ip.split(".").reduce((acc, part) => (acc << 8n) + BigInt(Number(part)), 0n);
}

function v6ToBigInt(ip: string): bigint {
  let text = ip.toLowerCase().split("%")[0];
  // An embedded dotted quad (::ffff:1.2.3.4) becomes two hex groups.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const n = v4ToBigInt(dotted[1]);
    text = text.slice(0, -dotted[1].length) + `${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const [head, tail] = text.split("::");
  const h = head ? head.split(":") : [];
  const t = tail !== undefined ? (tail ? tail.split(":") : []) : [];
  const groups = tail !== undefined ? [...h, ...Array(8 - h.length - t.length).fill("0"), ...t] : h;
  return groups.reduce((acc, g) => (acc << 16n) + BigInt(parseInt(g || "0", 16)), 0n);
}

function inCidr(ip: string, base: string, bits: number): boolean {
  const family = isIP(ip);
  if (family !== isIP(base)) return false;
  const width = family === 4 ? 32n : 128n;
  const toInt = family === 4 ? v4ToBigInt : v6ToBigInt;
  const shift = width - BigInt(bits);
  return (toInt(ip) >> shift) === (toInt(base) >> shift);
}

/** The IPv4 address inside an IPv4-mapped IPv6 address (::ffff:a.b.c.d), if any. */
function unmapV4(ip: string): string | null {
  if (isIP(ip) !== 6) return null;
  const n = v6ToBigInt(ip);
  if (n >> 32n !== 0xffffn) return null;
  return [24n, 16n, 8n, 0n].map((s) => String((n >> s) & 0xffn)).join(".");
}

/** True when the address is loopback, private, link-local, metadata or otherwise not public. */
export function isPrivateAddress(ip: string): boolean {
  const mapped = unmapV4(ip);
  if (mapped) return isPrivateAddress(mapped);
  const table = isIP(ip) === 4 ? BLOCKED_V4 : BLOCKED_V6;
  return table.some(([base, bits]) => inCidr(ip, base, bits));
}

export class OutboundPolicy {
  private readonly cidrs: Array<[string, number]> = [];
  private readonly hosts = new Set<string>();

  constructor(allowlist: string[]) {
    for (const entry of allowlist) {
      const [base, bits] = entry.split("/");
      if (isIP(base)) this.cidrs.push([base, bits ? Number(bits) : isIP(base) === 4 ? 32 : 128]);
      else this.hosts.add(entry.toLowerCase());
    }
  }

  private allowedAddress(ip: string): boolean {
    return this.cidrs.some(([base, bits]) => inCidr(ip, base, bits)) ||
      (unmapV4(ip) !== null && this.allowedAddress(unmapV4(ip)!));
  }

  /**
   * Why a URL may not be called, or null when it may. `resolve: false` skips DNS (then only literal
   * addresses and well-known names are judged); a name that does not resolve is left to the
   * check made before sending.
   */
  async refusal(rawUrl: string, options: { resolve?: boolean } = {}): Promise<string | null> {
    let url: URL;
    try {
      url = new URL(rawUrl);
    } catch {
      return "must be an absolute URL";
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") return "must use http or https";
    const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
    if (this.hosts.has(host)) return null;
    let addresses: string[];
    if (isIP(host)) addresses = [host];
    else if (BLOCKED_NAMES.has(host)) addresses = [BLOCKED_NAMES.get(host)!];
    else if (host.endsWith(".localhost")) addresses = ["127.0.0.1"];
    else if (options.resolve === false) return null;
    else {
      try {
        addresses = (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
      } catch {
        return null;
      }
    }
    const blocked = addresses.find((a) => isPrivateAddress(a) && !this.allowedAddress(a));
    return blocked
      ? `resolves to a private or reserved address (${blocked}) that OUTBOUND_ALLOWLIST does not allow`
      : null;
  }
}
