/**
 * Webhook receivers on 127.0.0.1 for the delivery tests: they record every call and answer as the
 * test says (a status, a hang until released, or a dropped connection), and let a test wait for the
 * n-th call instead of sleeping. Also an independent Standard Webhooks verifier (WebCrypto only).
 */

export interface Call {
  method: string;
  path: string;
  /** The query as received, with its `?` ("" when none). */
  search: string;
  headers: Headers;
  body: string;
  /** performance.now() when the request arrived. */
  at: number;
}

/** What to answer: a Response, "hang" (no answer until the receiver is released or closed). */
export type Answer = Response | "hang";

export interface Receiver {
  url(path?: string): string;
  calls: Call[];
  /** Resolves with the calls once there are at least `n` (rejects after `timeoutMs`). */
  waitForCalls(n: number, timeoutMs?: number): Promise<Call[]>;
  /** Answers every hanging request with 200, and from now on answers "hang" with 200 at once. */
  release(): void;
  close(): Promise<void>;
}

function waiter(calls: Call[]) {
  const waiting: Array<{ n: number; resolve: () => void }> = [];
  return {
    notify() {
      for (const w of [...waiting]) {
        if (calls.length >= w.n) {
          waiting.splice(waiting.indexOf(w), 1);
          w.resolve();
        }
      }
    },
    async waitFor(n: number, timeoutMs = 20_000): Promise<Call[]> {
      if (calls.length < n) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([
          new Promise<void>((resolve) => waiting.push({ n, resolve })),
          new Promise<never>((_, reject) =>
            timer = setTimeout(
              () => reject(new Error(`waited ${timeoutMs} ms for ${n} calls, got ${calls.length}`)),
              timeoutMs,
            )
          ),
        ]).finally(() => clearTimeout(timer));
      }
      return calls;
    },
  };
}

/** A receiver that answers each call with `answer(call, index)` (default 200). */
export function startReceiver(
  answer: (call: Call, index: number) => Answer | Promise<Answer> = () => new Response("ok"),
): Receiver {
  const calls: Call[] = [];
  const w = waiter(calls);
  let releaseAll!: () => void;
  const released = new Promise<void>((r) => releaseAll = r);
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const call: Call = {
      method: req.method,
      path: new URL(req.url).pathname,
      search: new URL(req.url).search,
      headers: req.headers,
      body: await req.text(),
      at: performance.now(),
    };
    const index = calls.push(call) - 1;
    w.notify();
    const a = await answer(call, index);
    if (a !== "hang") return a;
    await released;
    return new Response("released");
  });
  return {
    url: (path = "/hook") => `http://127.0.0.1:${server.addr.port}${path}`,
    calls,
    waitForCalls: w.waitFor,
    release() {
      releaseAll();
    },
    async close() {
      releaseAll();
      await server.shutdown();
    },
  };
}

/** A receiver that reads each request and closes the connection without answering. */
export function startClosingReceiver(): Receiver {
  const calls: Call[] = [];
  const w = waiter(calls);
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns = new Set<Deno.Conn>();
  const serve = (async () => {
    for await (const conn of listener) {
      conns.add(conn);
      (async () => {
        const buf = new Uint8Array(64 * 1024);
        const n = await conn.read(buf).catch(() => null);
        const text = new TextDecoder().decode(buf.subarray(0, n ?? 0));
        const [head, body = ""] = text.split("\r\n\r\n");
        const [requestLine, ...lines] = head.split("\r\n");
        const headers = new Headers();
        for (const line of lines) {
          const i = line.indexOf(":");
          if (i > 0) headers.append(line.slice(0, i).trim(), line.slice(i + 1).trim());
        }
        const [method = "", path = ""] = requestLine.split(" ");
        const q = path.indexOf("?");
        calls.push({
          method,
          path: q < 0 ? path : path.slice(0, q),
          search: q < 0 ? "" : path.slice(q),
          headers,
          body,
          at: performance.now(),
        });
        w.notify();
        conns.delete(conn);
        try {
          conn.close();
        } catch { /* already closed */ }
      })();
    }
  })();
  return {
    url: (path = "/hook") => `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}${path}`,
    calls,
    waitForCalls: w.waitFor,
    release() {},
    async close() {
      listener.close();
      for (const c of conns) {
        try {
          c.close();
        } catch { /* gone */ }
      }
      await serve.catch(() => {});
    },
  };
}

function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

/** The entries of a `webhook-signature` header (`v1,<base64>`), split on spaces as Standard Webhooks says. */
export function signatureEntries(headers: Headers): string[] {
  return (headers.get("webhook-signature") ?? "").split(" ").filter((e) => e !== "");
}

/**
 * Whether one `v1,<base64>` entry of `webhook-signature` is the HMAC-SHA256, under `secret`, of
 * `${webhook-id}.${webhook-timestamp}.${body}` (Standard Webhooks, written from the specification,
 * not from the production signer; the key is the base64 after `whsec_`).
 */
export async function verifySignatureEntry(
  secret: string,
  headers: Headers,
  body: string,
  entry: string,
): Promise<boolean> {
  const id = headers.get("webhook-id");
  const timestamp = headers.get("webhook-timestamp");
  if (!id || !timestamp || !secret.startsWith("whsec_")) return false;
  const [version, signature, ...rest] = entry.split(",");
  if (version !== "v1" || !signature || rest.length) return false;
  const key = await crypto.subtle.importKey(
    "raw",
    fromBase64(secret.slice(6)),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["verify"],
  );
  let mac: Uint8Array<ArrayBuffer>;
  try {
    mac = fromBase64(signature);
  } catch {
    return false; // not base64
  }
  const signed = new TextEncoder().encode(`${id}.${timestamp}.${body}`);
  return await crypto.subtle.verify("HMAC", key, mac, signed);
}

/**
 * Standard Webhooks verification as a receiver does it: `webhook-signature` may hold several
 * space-separated entries (several secrets, during a rotation); it passes when at least one `v1`
 * entry verifies under `secret` (see verifySignatureEntry).
 */
export async function verifyStandardWebhook(
  secret: string,
  headers: Headers,
  body: string,
): Promise<boolean> {
  for (const entry of signatureEntries(headers)) {
    if (await verifySignatureEntry(secret, headers, body, entry)) return true;
  }
  return false;
}

/** Hex SHA-256, for the expected X-Idempotency-Key. */
export async function sha256HexOf(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Polls `check` until it returns a value other than undefined (a database state the test awaits). */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
