/**
 * One HTTP/1.1 request to an address already vetted by OutboundPolicy (outbound.ts), never to a
 * name: undici is given the address as the origin, so no DNS lookup happens here, while the URL's
 * host name goes in the Host header, from which undici takes the TLS servername (SNI and the name
 * the certificate is checked against; fetch() has no way to pin).
 *
 * undici, not node:http or fetch: under Deno both of those re-send a request on their own when it
 * fails on a reused keep-alive connection (a timeout's abort, a reset, a close before the answer),
 * so a receiver would see more calls than were recorded. undici never re-sends a request that was
 * written (tools/resend_probe.ts measures all three), and still reuses connections.
 */
import { Agent, type Dispatcher } from "undici";
import { isIP } from "node:net";
import { concatBytes } from "./bytes.ts";

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
  /**
   * The body as bytes, read to the end; rejects with BodyTooLarge (and closes the connection) as
   * soon as more than `maxBytes` arrived.
   */
  bytes(options: { maxBytes: number }): Promise<Uint8Array>;
  /** The body as a stream (the media endpoint passes a file on without holding it). */
  stream(): ReadableStream<Uint8Array>;
  /** Drops the body unread (drained in the background; closes the connection when it is long). */
  discard(): void;
}

/** A body longer than the caller's limit: it was not read further. */
export class BodyTooLarge extends Error {
  override name = "BodyTooLarge";
  constructor(readonly maxBytes: number) {
    super(`the body is over ${maxBytes} bytes`);
  }
}

/** A dropped body longer than this is not drained: its connection is closed instead. */
const MAX_DRAINED_BYTES = 64 * 1024;

/**
 * Keep-alive connection pools, one per origin. The origin is always the vetted address (and port
 * and scheme), and undici reconnects when a request's servername differs from its connection's, so
 * a pooled connection is only ever reused for the same vetted address and name: pinning holds, and
 * a receiver's events share a connection instead of paying a TCP (and TLS) handshake each.
 */
export type OutboundAgents = Agent;

/** Settings shared by every outbound pool (the model client's too). */
export const POOL_OPTIONS = {
  // HTTP/1.1 only: one request per connection at a time, the behaviour measured not to re-send.
  allowH2: false,
  pipelining: 1,
  // Every caller aborts by its own timeout (some are configured, and may exceed undici's 300 s).
  headersTimeout: 0,
  bodyTimeout: 0,
  // undici's default idle limit (4 s, or the server's Keep-Alive hint less 2 s) stays below
  // common server idle timeouts, so a pooled connection is rarely found closed when reused.
} as const;

/** Pools for one OutboundPolicy; `destroyOutboundAgents` closes their connections. */
export function createOutboundAgents(): OutboundAgents {
  // At most the per-webhook cap (32) in flight per receiver address.
  return new Agent({ ...POOL_OPTIONS, connections: 32 });
}

export function destroyOutboundAgents(agents: OutboundAgents): void {
  agents.destroy().catch(() => {});
}

export async function pinnedRequest(
  url: URL,
  address: string,
  init: OutboundInit,
  agents: OutboundAgents,
): Promise<OutboundResponse> {
  const headers: Record<string, string> = {};
  init.headers.forEach((value, name) => headers[name] = value);
  headers["host"] = url.host;
  const dialled = isIP(address) === 6 ? `[${address}]` : address;
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  const signal = init.signal;
  signal?.throwIfAborted();
  const res = await agents.request({
    origin: `${url.protocol}//${dialled}:${port}`,
    path: `${url.pathname}${url.search}`,
    method: init.method as Dispatcher.HttpMethod,
    headers,
    body: init.body,
    signal,
  });
  const responseHeaders = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) {
      responseHeaders.append(name, v);
    }
  }
  return {
    status: res.statusCode,
    headers: responseHeaders,
    text: () => res.body.text(),
    async bytes({ maxBytes }) {
      const chunks: Uint8Array[] = [];
      let length = 0;
      for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
        length += chunk.length;
        if (length > maxBytes) {
          res.body.destroy();
          throw new BodyTooLarge(maxBytes);
        }
        chunks.push(chunk);
      }
      return concatBytes(chunks, length);
    },
    stream: () => ReadableStream.from(res.body as AsyncIterable<Uint8Array>),
    discard: () => {
      // Drained, so the connection goes back to its pool; a long body is cut off instead.
      res.body.dump({ limit: MAX_DRAINED_BYTES }).catch(() => {});
    },
  };
}
