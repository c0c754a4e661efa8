/**
 * A plain HTTP/1.1 server on 127.0.0.1 over node:net that counts every request and every TCP
 * connection reaching it, and answers each request as the test says: a status with a body (kept
 * alive, so the client may reuse the connection), "hang" (no answer until closed), or "reset"
 * (the connection is reset with no answer). A raw server, because Deno.serve cannot reset.
 */
import net from "node:net";
import { Buffer } from "node:buffer";

export interface CountedRequest {
  method: string;
  path: string;
  headers: Headers;
  body: string;
  /** Which connection (0-based, in accept order) carried it. */
  connection: number;
}

export type Reaction = { status: number; body?: string } | "hang" | "reset";

export interface CountingReceiver {
  url(path?: string): string;
  requests: CountedRequest[];
  /** TCP connections accepted so far. */
  connections(): number;
  /** Resolves once at least `n` requests arrived (rejects after `timeoutMs`). */
  waitForRequests(n: number, timeoutMs?: number): Promise<CountedRequest[]>;
  close(): Promise<void>;
}

const REASONS: Record<number, string> = { 200: "OK", 500: "Internal Server Error" };

export async function startCountingReceiver(
  react: (request: CountedRequest, index: number) => Reaction,
): Promise<CountingReceiver> {
  const requests: CountedRequest[] = [];
  const waiting: Array<{ n: number; resolve: () => void }> = [];
  const sockets = new Set<net.Socket>();
  let accepted = 0;
  const server = net.createServer((socket) => {
    const connection = accepted++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
    let pending = Buffer.alloc(0);
    socket.on("data", (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        const end = pending.indexOf("\r\n\r\n");
        if (end < 0) return;
        const [requestLine, ...lines] = pending.subarray(0, end).toString("latin1").split("\r\n");
        const headers = new Headers();
        for (const line of lines) {
          const i = line.indexOf(":");
          if (i > 0) headers.append(line.slice(0, i).trim(), line.slice(i + 1).trim());
        }
        const length = Number(headers.get("content-length") ?? 0);
        if (pending.length < end + 4 + length) return;
        const body = pending.subarray(end + 4, end + 4 + length).toString("utf8");
        pending = pending.subarray(end + 4 + length);
        const [method = "", path = ""] = requestLine.split(" ");
        const request: CountedRequest = { method, path, headers, body, connection };
        const index = requests.push(request) - 1;
        for (const w of [...waiting]) {
          if (requests.length >= w.n) {
            waiting.splice(waiting.indexOf(w), 1);
            w.resolve();
          }
        }
        const reaction = react(request, index);
        if (reaction === "reset") {
          socket.resetAndDestroy();
          return;
        }
        if (reaction === "hang") continue;
        const text = reaction.body ?? "{}";
        socket.write(
          `HTTP/1.1 ${reaction.status} ${REASONS[reaction.status] ?? "Status"}\r\n` +
            `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\n` +
            `connection: keep-alive\r\n\r\n${text}`,
        );
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: (path = "/hook") => `http://127.0.0.1:${port}${path}`,
    requests,
    connections: () => accepted,
    async waitForRequests(n, timeoutMs = 20_000) {
      if (requests.length < n) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([
          new Promise<void>((resolve) => waiting.push({ n, resolve })),
          new Promise<never>((_, reject) =>
            timer = setTimeout(
              () => reject(new Error(`waited ${timeoutMs} ms for ${n} requests, got ${requests.length}`)),
              timeoutMs,
            )
          ),
        ]).finally(() => clearTimeout(timer));
      }
      return requests;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
