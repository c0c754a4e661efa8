/**
 * The outbound address rule (docs/behaviour.md "Event webhooks and outbound calls"): webhook and intent URLs must be http(s) and must not
 * reach this machine, private, link-local, metadata or otherwise non-public addresses unless
 * OUTBOUND_ALLOWLIST lists them (CIDRs or host names). Address classification is ipaddr.js'.
 * Every outbound call goes through `OutboundPolicy.request`, which resolves the name once, vets
 * every address and connects to the vetted one (outbound_http.ts), so DNS cannot change the answer
 * between the check and the connection.
 */
import { lookup } from "node:dns/promises";
import ipaddr from "ipaddr.js";
import {
  createOutboundAgents,
  destroyOutboundAgents,
  type OutboundInit,
  type OutboundResponse,
  pinnedRequest,
} from "./outbound_http.ts";

export type { OutboundInit, OutboundResponse } from "./outbound_http.ts";
export { BodyTooLarge } from "./outbound_http.ts";

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** Every address a host name resolves to (A and AAAA), as text. Rejects when the name does not resolve. */
export type Resolver = (host: string) => Promise<string[]>;

export const systemResolver: Resolver = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** IANA's global unicast block: the only IPv6 space with public hosts. */
const IPV6_GLOBAL = ipaddr.parseCIDR("2000::/3");

/** Names that mean this machine or the cloud metadata service, judged without DNS. */
const MACHINE_NAMES = new Set(["localhost", "metadata", "metadata.google.internal"]);

/**
 * True for an address a public receiver can have: ipaddr.js' plain "unicast" range (which leaves
 * out private, loopback, link-local and metadata, carrier-grade NAT, unique-local, multicast,
 * reserved and documentation, unspecified, IPv4-mapped/translated, 6to4 and Teredo), and for IPv6
 * only within 2000::/3 (which also leaves out the deprecated IPv4-compatible ::/96).
 */
export function isPublicAddress(address: Address): boolean {
  if (address.range() !== "unicast") return false;
  return address.kind() === "ipv4" || address.match(IPV6_GLOBAL);
}

/** A literal address as an ipaddr.js value (strict: four-part dotted IPv4 or IPv6), or null. */
function parseLiteral(text: string): Address | null {
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return ipaddr.IPv4.parse(text);
  if (ipaddr.IPv6.isValid(text)) return ipaddr.IPv6.parse(text);
  return null;
}

/** A host name of letters, digits and hyphens in dot-separated labels, not all-numeric. */
const HOST_NAME =
  /^(?=.*[a-z])[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

/** Lowercase, without brackets and trailing dots: `Foo.LOCALHOST.` and `foo.localhost` are one name. */
export function normalHost(hostname: string): string {
  return hostname.replace(/^\[|\]$/g, "").toLowerCase().replace(/\.+$/, "");
}

type AllowEntry = { cidr: [Address, number] } | { host: string };

/** One OUTBOUND_ALLOWLIST entry, or null when it is neither a CIDR, an address nor a host name. */
function parseAllowEntry(entry: string): AllowEntry | null {
  const text = entry.trim();
  if (text.includes("/")) {
    const [base, bits] = text.split("/");
    if (!parseLiteral(base) || !/^\d{1,3}$/.test(bits)) return null;
    try {
      return { cidr: ipaddr.parseCIDR(text) };
    } catch {
      return null;
    }
  }
  const literal = parseLiteral(text);
  if (literal) return { cidr: [literal, literal.kind() === "ipv4" ? 32 : 128] };
  const host = normalHost(text);
  return HOST_NAME.test(host) ? { host } : null;
}

/** Why each malformed OUTBOUND_ALLOWLIST entry is refused (config.ts stops the start on any). */
export function allowlistProblems(entries: string[]): string[] {
  return entries.filter((e) => parseAllowEntry(e) === null).map((e) =>
    `${JSON.stringify(e)} is not a CIDR, an IP address or a host name`
  );
}

/** A call the outbound rule refused; `message` is safe to store and show (no resolved address). */
export class OutboundRefused extends Error {
  override name = "OutboundRefused";
}

const PRIVATE = "resolves to a private or reserved address that OUTBOUND_ALLOWLIST does not allow";

export interface OutboundOptions {
  /** Replaces the system resolver (tests script DNS answers with it). */
  resolve?: Resolver;
}

export class OutboundPolicy {
  private readonly cidrs: Array<[Address, number]> = [];
  private readonly hosts = new Set<string>();
  private readonly resolve: Resolver;
  private readonly agents = createOutboundAgents();

  /** `allowlist` is config.outboundAllowlist, already checked by allowlistProblems(). */
  constructor(allowlist: string[], options: OutboundOptions = {}) {
    for (const raw of allowlist) {
      const entry = parseAllowEntry(raw);
      if (!entry) throw new Error(`OUTBOUND_ALLOWLIST: ${allowlistProblems([raw])[0]}`);
      if ("cidr" in entry) this.cidrs.push(entry.cidr);
      else this.hosts.add(entry.host);
    }
    this.resolve = options.resolve ?? systemResolver;
  }

  private allowlisted(address: Address): boolean {
    const forms = [address];
    if (address.kind() === "ipv6" && (address as ipaddr.IPv6).isIPv4MappedAddress()) {
      forms.push((address as ipaddr.IPv6).toIPv4Address());
    }
    return forms.some((a) =>
      this.cidrs.some(([base, bits]) => a.kind() === base.kind() && a.match(base, bits))
    );
  }

  private allowed(address: Address): boolean {
    return isPublicAddress(address) || this.allowlisted(address);
  }

  /** What the URL itself breaks, before any DNS; the parsed URL and its host when nothing. */
  private syntax(rawUrl: string): { url: URL; host: string } | { refusal: string } {
    let url: URL;
    try {
      url = new URL(rawUrl);
    } catch {
      return { refusal: "must be an absolute URL" };
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") return { refusal: "must use http or https" };
    // Credentials belong in the registration's headers, whose values roles without webhook:secrets never see.
    if (url.username || url.password) return { refusal: "must not contain a user name or password" };
    return { url, host: normalHost(url.hostname) };
  }

  /** Why a literal address or a name of this machine may not be called; undefined: ask DNS. */
  private withoutDns(host: string): string | null | undefined {
    if (this.hosts.has(host)) return null;
    const literal = parseLiteral(host);
    // A literal address is the user's own text, so it may be named.
    if (literal) {
      return this.allowed(literal)
        ? null
        : `resolves to a private or reserved address (${host}) that OUTBOUND_ALLOWLIST does not allow`;
    }
    if (MACHINE_NAMES.has(host) || host.endsWith(".localhost")) return "names this machine";
    return undefined;
  }

  /** Why these resolved addresses may not be called (never naming them), or null. */
  private judge(host: string, addresses: Address[]): string | null {
    // A single-label name pointing at loopback is this machine's own name, allowlist or not.
    if (!host.includes(".") && addresses.some((a) => a.range() === "loopback")) return "names this machine";
    return addresses.every((a) => this.allowed(a)) ? null : PRIVATE;
  }

  /**
   * Why a URL may not be registered, or null when it may. A name that does not resolve (yet) is
   * accepted: the receiver may not exist yet, and every call checks again. `resolve: false` skips
   * DNS (then only the URL, literal addresses and names of this machine are judged).
   */
  async refusal(rawUrl: string, options: { resolve?: boolean } = {}): Promise<string | null> {
    const parsed = this.syntax(rawUrl);
    if ("refusal" in parsed) return parsed.refusal;
    const early = this.withoutDns(parsed.host);
    if (early !== undefined || options.resolve === false) return early ?? null;
    const addresses = await this.lookup(parsed.host);
    return addresses?.length ? this.judge(parsed.host, addresses) : null;
  }

  /** Every address of `host`, or null when it does not resolve (or resolves to garbage). */
  private async lookup(host: string): Promise<Address[] | null> {
    try {
      const found = (await this.resolve(host)).map((a) => parseLiteral(a.split("%")[0]));
      return found.every((a) => a !== null) ? found as Address[] : null;
    } catch {
      return null;
    }
  }

  /**
   * The one way to call out: checks the URL, resolves its host once (a failure refuses), refuses
   * when any address is not allowed, then connects to the first vetted address with the name kept
   * for the Host header, TLS SNI and certificate check. Never follows redirects. Rejects with
   * OutboundRefused when the rule refuses, or with the connection's error.
   */
  async request(rawUrl: string, init: OutboundInit): Promise<OutboundResponse> {
    const parsed = this.syntax(rawUrl);
    if ("refusal" in parsed) throw new OutboundRefused(`url ${parsed.refusal}`);
    const { url, host } = parsed;
    const early = this.withoutDns(host);
    if (early) throw new OutboundRefused(`url ${early}`);
    let address = parseLiteral(host);
    if (!address) {
      const addresses = await this.lookup(host);
      if (!addresses?.length) throw new OutboundRefused("could not resolve host");
      // An allowlisted name skips the address rule, not the single lookup.
      const why = this.hosts.has(host) ? null : this.judge(host, addresses);
      if (why) throw new OutboundRefused(`url ${why}`);
      address = addresses[0];
    }
    init.signal?.throwIfAborted();
    return await pinnedRequest(url, address.toString(), init, this.agents);
  }

  /** Closes the idle kept-alive connections (the app's stop). */
  close(): void {
    destroyOutboundAgents(this.agents);
  }
}
