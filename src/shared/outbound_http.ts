/**
 * One HTTP/1.1 request to an address already vetted by OutboundPolicy (outbound.ts), never to a
 * name: node:http(s) is given the address as `host`, so no DNS lookup happens here, while the URL's
 * host name goes in the Host header and, for https, in `servername`, which sets SNI and is the name
 * the certificate is checked against (Deno's node:tls honours both; fetch() has no way to pin).
 */
import http from "node:http";
import https from "node:https";
import { Buffer } from "node:buffer";
import { isIP } from "node:net";

export interface OutboundInit {
  method: string;
  headers: Headers;
  body?: string | Uint8Array;
  /** Aborts the request (timeouts are the caller's, as an AbortSignal.timeout or its own). */
  signal?: AbortSignal;
}

export interface OutboundResponse {
  status: number;
  headers: Headers;
  /** The body as text, read to the end. */
  text(): Promise<string>;
  /** Drops the body unread (drained in the background; closes the connection when it is long). */
  discard(): void;
}

/**
 * Keep-alive connection pools, one per protocol. A pool is keyed by the dialled host (here always
 * the vetted address), port and TLS servername, so a pooled connection is only ever reused for the
 * same vetted address and name: pinning holds, and a receiver's events share a connection instead
 * of paying a TCP (and TLS) handshake each.
 */
/** A dropped body longer than this is not drained: its connection is closed instead. */
const MAX_DRAINED_BYTES = 64 * 1024;

export interface OutboundAgents {
  http: http.Agent;
  https: https.Agent;
}

/** Pools for one OutboundPolicy; `destroyOutboundAgents` closes their idle connections. */
export function createOutboundAgents(): OutboundAgents {
  // At most the per-webhook cap (32) in flight per receiver address, and idle ones closed after 30 s.
  const options = { keepAlive: true, maxSockets: 32, maxFreeSockets: 32, timeout: 30_000 };
  return { http: new http.Agent(options), https: new https.Agent(options) };
}

export function destroyOutboundAgents(agents: OutboundAgents): void {
  agents.http.destroy();
  agents.https.destroy();
}

export async function pinnedRequest(
  url: URL,
  address: string,
  init: OutboundInit,
  agents: OutboundAgents,
): Promise<OutboundResponse> {
  const secure = url.protocol === "https:";
  const hostname = url.hostname.replace(/^\[|\]$/g, "");
  const isName = isIP(hostname) === 0;
  const headers: Record<string, string> = {};
  init.headers.forEach((value, name) => headers[name] = value);
  headers["host"] = url.host;
  const body = init.body === undefined ? undefined : Buffer.from(init.body);
  if (body) headers["content-length"] = String(body.byteLength);
  const options: https.RequestOptions = {
    method: init.method,
    host: address,
    port: url.port || (secure ? 443 : 80),
    path: `${url.pathname}${url.search}`,
    headers,
    agent: secure ? agents.https : agents.http,
    // SNI is for names only; the certificate of a literal address is checked against the address.
    ...(secure ? { servername: isName ? hostname : undefined } : {}),
  };
  const signal = init.signal;
  signal?.throwIfAborted();
  return await new Promise<OutboundResponse>((resolve, reject) => {
    const req = (secure ? https : http).request(options, (res) => {
      const responseHeaders = new Headers();
      for (const [name, value] of Object.entries(res.headers)) {
        for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) {
          responseHeaders.append(name, v);
        }
      }
      resolve({
        status: res.statusCode ?? 0,
        headers: responseHeaders,
        text: () =>
          new Promise<string>((ok, fail) => {
            const chunks: Buffer[] = [];
            res.on("data", (c: Buffer) => chunks.push(c));
            res.on("end", () => ok(Buffer.concat(chunks).toString("utf8")));
            res.on("error", fail);
            res.on("close", () => fail(new Error("connection closed before the body ended")));
          }),
        discard: () => {
          // Drained, so the connection goes back to its pool; a long body is cut off instead.
          let drained = 0;
          res.on("data", (chunk: Buffer) => {
            drained += chunk.length;
            if (drained > MAX_DRAINED_BYTES) {
              res.destroy();
              req.destroy();
            }
          });
          res.on("error", () => {});
          res.resume();
        },
      });
    });
    const onAbort = () => req.destroy(signal?.reason instanceof Error ? signal.reason : new Error("aborted"));
    signal?.addEventListener("abort", onAbort, { once: true });
    req.on("close", () => signal?.removeEventListener("abort", onAbort));
    req.on("error", reject);
    req.end(body);
  });
}
