/**
 * Which HTTP clients re-send a request on their own under Deno: each client makes a fixed number of
 * calls to a counting TCP server on 127.0.0.1 that answers as each scenario says, and the probe
 * prints how many requests reached the server against how many calls were made.
 *
 *   deno run -A tools/resend_probe.ts
 *
 * Scenarios (the first call always gets a keep-alive 200, so the later ones can reuse its connection):
 * - timeout: the server reads the request and never answers; the caller aborts after 300 ms.
 * - reset: the server reads the request and resets the connection (RST), no answer.
 * - close: the server reads the request and closes the connection (FIN), no answer.
 * - 5xx: the server answers 500.
 */
import net from "node:net";
import http from "node:http";
import OpenAI from "openai";
import { Agent as UndiciAgent, fetch as undiciFetch } from "undici";
import { Buffer } from "node:buffer";
import { createOutboundAgents, destroyOutboundAgents, pinnedRequest } from "../src/shared/outbound_http.ts";

type Behaviour = "ok" | "hang" | "reset" | "close" | "500";

function counter(behave: (index: number) => Behaviour) {
  let requests = 0;
  let connections = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((sock) => {
    sockets.add(sock);
    connections++;
    sock.on("close", () => sockets.delete(sock));
    sock.on("error", () => {});
    let pending = "";
    sock.on("data", (chunk: Buffer) => {
      pending += chunk.toString("latin1");
      for (;;) {
        const end = pending.indexOf("\r\n\r\n");
        if (end < 0) return;
        const head = pending.slice(0, end);
        const length = Number(/content-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
        if (pending.length < end + 4 + length) return;
        pending = pending.slice(end + 4 + length);
        const index = requests++;
        const b = behave(index);
        const json = '{"id":"x","object":"chat.completion","created":0,"model":"m",' +
          '"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"hi"}}]}';
        if (b === "ok" || b === "500") {
          const status = b === "ok" ? "200 OK" : "500 Internal Server Error";
          sock.write(
            `HTTP/1.1 ${status}\r\ncontent-type: application/json\r\ncontent-length: ${json.length}\r\n` +
              `connection: keep-alive\r\n\r\n${json}`,
          );
        } else if (b === "reset") sock.resetAndDestroy();
        else if (b === "close") sock.end();
      }
    });
  });
  return new Promise<
    { port: number; count: () => number; connections: () => number; close: () => Promise<void> }
  >((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({
        port: (server.address() as net.AddressInfo).port,
        count: () => requests,
        connections: () => connections,
        close: () =>
          new Promise((done) => {
            for (const s of sockets) s.destroy();
            server.close(() => done());
          }),
      }))
  );
}

type Call = (url: string, signal: AbortSignal) => Promise<unknown>;

const body = JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] });
const headers = { "content-type": "application/json" };

function clients(): Record<string, () => { call: Call; close?: () => void }> {
  return {
    "fetch (pooled)": () => ({
      call: async (url, signal) => await (await fetch(url, { method: "POST", body, headers, signal })).text(),
    }),
    "fetch + createHttpClient(poolMaxIdlePerHost: 0)": () => {
      const client = Deno.createHttpClient({ poolMaxIdlePerHost: 0 });
      return {
        call: async (url, signal) =>
          await (await fetch(url, { method: "POST", body, headers, signal, client })).text(),
        close: () => client.close(),
      };
    },
    "node:http keep-alive Agent": () => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
      return {
        call: (url, signal) =>
          new Promise((resolve, reject) => {
            const req = http.request(url, { method: "POST", headers, agent, signal }, (res) => {
              res.resume();
              res.on("end", resolve);
            });
            req.on("error", reject);
            req.end(body);
          }),
        close: () => agent.destroy(),
      };
    },
    "outbound_http.ts pinnedRequest (undici Agent)": () => {
      const agents = createOutboundAgents();
      return {
        call: async (url, signal) =>
          await (await pinnedRequest(new URL(url), "127.0.0.1", {
            method: "POST",
            headers: new Headers(headers),
            body,
            signal,
          }, agents)).text(),
        close: () => destroyOutboundAgents(agents),
      };
    },
    "node:http agent: false": () => ({
      call: (url, signal) =>
        new Promise((resolve, reject) => {
          const req = http.request(url, { method: "POST", headers, agent: false, signal }, (res) => {
            res.resume();
            res.on("end", resolve);
          });
          req.on("error", reject);
          req.end(body);
        }),
    }),
    "undici Agent (pooled)": () => {
      const dispatcher = new UndiciAgent({ connections: 32 });
      return {
        call: async (url, signal) => {
          const u = new URL(url);
          const res = await dispatcher.request({
            origin: u.origin,
            path: u.pathname,
            method: "POST",
            headers,
            body,
            signal,
          });
          return await res.body.text();
        },
        close: () => void dispatcher.close(),
      };
    },
    "openai (undici fetch + Agent, maxRetries 0)": () => {
      const dispatcher = new UndiciAgent({ connections: 32 });
      const fetch = ((input: string | URL | Request, init?: RequestInit) =>
        undiciFetch(
          input as string,
          { ...init, dispatcher } as never,
        )) as unknown as typeof globalThis.fetch;
      let client: OpenAI | undefined;
      return {
        call: async (url, signal) => {
          client ??= new OpenAI({
            apiKey: "k",
            baseURL: url.replace(/\/chat\/completions$/, ""),
            maxRetries: 0,
            fetch,
          });
          return await client.chat.completions.create({
            model: "m",
            messages: [{ role: "user", content: "hi" }],
          }, {
            signal,
          });
        },
        close: () => void dispatcher.close(),
      };
    },
    "openai (default fetch, maxRetries 0)": () => {
      let base = "";
      return {
        call: async (url, signal) => {
          base = url.replace(/\/chat\/completions$/, "");
          const client = new OpenAI({ apiKey: "k", baseURL: base, maxRetries: 0 });
          return await client.chat.completions.create({
            model: "m",
            messages: [{ role: "user", content: "hi" }],
          }, {
            signal,
          });
        },
      };
    },
  };
}

const scenarios: Record<string, Behaviour> = {
  "all ok": "ok",
  timeout: "hang",
  reset: "reset",
  close: "close",
  "5xx": "500",
};
const CALLS = 6;

for (const [name, make] of Object.entries(clients())) {
  const row: string[] = [];
  for (const [scenario, behaviour] of Object.entries(scenarios)) {
    // Calls alternate: a keep-alive 200 (leaves a pooled connection) and then the scenario's answer.
    const server = await counter((i) => i % 2 === 0 ? "ok" : behaviour);
    const client = make();
    let calls = 0;
    const url = `http://127.0.0.1:${server.port}/v1/chat/completions`;
    const seen: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      // The server's count decides which answer comes next: a re-send shifts it, as a receiver sees.
      calls++;
      const before = server.count();
      await client.call(url, AbortSignal.timeout(300)).catch(() => {});
      await new Promise((r) => setTimeout(r, 50));
      seen.push(server.count() - before);
    }
    // Late re-sends (after the caller gave up) still count.
    await new Promise((r) => setTimeout(r, 1500));
    row.push(`${scenario}: ${server.count()}/${calls} [${seen.join(",")}] ${server.connections()}c`);
    client.close?.();
    await server.close();
  }
  console.log(`${name.padEnd(50)} ${row.join("  ")}`);
}
