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
  /** Drops the body unread and closes the connection. */
  discard(): void;
}

export async function pinnedRequest(
  url: URL,
  address: string,
  init: OutboundInit,
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
    // A connection of its own: a pooled one could have been dialled for another address.
    agent: false,
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
          res.destroy();
          req.destroy();
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
