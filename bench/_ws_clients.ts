/**
 * The subscribers of bench/subscriptions.ts, in a process of their own (so the server's CPU and
 * theirs can be told apart). Env: URL, SIZE, MODE ("plain": bench/_ws_broadcast.ts; "graphql-ws":
 * the app, a `conversationEvents` subscription per socket), CREDENTIALS (a JSON file:
 * `{ workspaceId, agentId, tokens: string[] }`, socket i uses tokens[i % tokens.length]).
 * Lines on stdin: `start` (the warm-up is over: answered with `started`), `t <epoch ms>` (the next
 * event was published then), `report` (prints
 * `{ latencies, cpuMs, events, closed }` once every event has arrived, or none for 10 s, and exits:
 * `events` is [received, p99, max] per event, `closed` the sockets the server closed, by code).
 * Prints `ready` once every socket is subscribed, `warm` when each received one event before the
 * first `t`.
 */
import { cpuTimeMs } from "./_cpu.ts";

const url = Deno.env.get("URL")!;
const size = Number(Deno.env.get("SIZE"));
const graphqlWs = Deno.env.get("MODE") === "graphql-ws";
const credentials = graphqlWs
  ? JSON.parse(await Deno.readTextFile(Deno.env.get("CREDENTIALS")!)) as {
    workspaceId: string;
    agentId: string;
    tokens: string[];
  }
  : undefined;

const now = () => performance.timeOrigin + performance.now();
/** When each event was published; a socket's k-th event after `start` is event k. */
const sentAt: number[] = [];
/** Sockets that received the warm-up. */
let warm = 0;
/** From `start` on, events are measured (what came before was the warm-up). */
let measuring = false;
/**
 * When each socket received event k, by k. Latencies are worked out at the report: on a loaded
 * machine an event may come before its `t` line has been read, and must count all the same.
 */
const arrivals: number[][] = [];
let received = 0;
/** Sockets closed by the server after they subscribed, by close code. */
const closed: Record<string, number> = {};
const receiver = () => {
  let k = 0;
  let warmed = false;
  return () => {
    if (!measuring) {
      if (warmed) return;
      warmed = true;
      if (++warm === size) console.log("warm");
      return;
    }
    (arrivals[k++] ??= []).push(now());
    received++;
  };
};

function connect(i: number): Promise<void> {
  const onEvent = receiver();
  const socket = graphqlWs ? new WebSocket(url, "graphql-transport-ws") : new WebSocket(url);
  return new Promise<void>((resolve, reject) => {
    socket.onerror = () => reject(new Error("socket error"));
    socket.onclose = (e) => {
      closed[e.code] = (closed[e.code] ?? 0) + 1;
      reject(new Error(`socket closed ${e.code} ${e.reason}`));
    };
    socket.onopen = () => {
      if (!credentials) return;
      const token = credentials.tokens[i % credentials.tokens.length];
      socket.send(JSON.stringify({
        type: "connection_init",
        payload: { authorization: `Bearer ${token}`, "x-workspace-id": credentials.workspaceId },
      }));
    };
    socket.onmessage = (e) => {
      const data = String(e.data);
      if (!credentials) return data === "subscribed" ? resolve() : onEvent();
      // An event is not parsed (the baseline's clients parse nothing either).
      if (data.startsWith(`{"id":"1","type":"next"`)) return onEvent();
      const msg = JSON.parse(data);
      if (msg.type === "next") onEvent();
      // The server's keepalive: answered as graphql-ws clients do.
      else if (msg.type === "ping") socket.send(`{"type":"pong"}`);
      else if (msg.type === "connection_ack") {
        socket.send(JSON.stringify({
          id: "1",
          type: "subscribe",
          payload: {
            query: `subscription ($a: ID!) { conversationEvents(agentId: $a) {
              type conversation { id status } message { id content sender } } }`,
            variables: { a: credentials.agentId },
          },
        }));
        resolve(); // subscribed once the server handles it: the warm-up event confirms it
      } else if (msg.type === "error") reject(new Error(data));
    };
  });
}

for (let i = 0; i < size; i += 100) {
  await Promise.all(Array.from({ length: Math.min(100, size - i) }, (_, j) => connect(i + j)));
}
console.log("ready");

const lines = Deno.stdin.readable.pipeThrough(new TextDecoderStream());
let buffer = "";
for await (const chunk of lines) {
  buffer += chunk;
  let end;
  while ((end = buffer.indexOf("\n")) >= 0) {
    const line = buffer.slice(0, end);
    buffer = buffer.slice(end + 1);
    if (line === "start") {
      measuring = true;
      console.log("started");
    } else if (line.startsWith("t ")) {
      sentAt.push(Number(line.slice(2)));
    } else if (line === "report") {
      // Every event, or nothing new for 10 s: what has not come by then is counted as lost (a
      // loaded machine delays events; it must not make them look lost).
      let seen = received;
      let quietSince = performance.now();
      while (received < size * sentAt.length && performance.now() - quietSince < 10_000) {
        await new Promise((r) => setTimeout(r, 20));
        if (received !== seen) [seen, quietSince] = [received, performance.now()];
      }
      const latencies: number[] = [];
      const events = sentAt.map((at, k) => {
        const l = (arrivals[k] ?? []).map((arrived) => arrived - at).sort((a, b) => a - b);
        latencies.push(...l);
        return [l.length, Math.round(l[Math.floor(l.length * 0.99)] ?? 0), Math.round(l[l.length - 1] ?? 0)];
      });
      console.log(JSON.stringify({ latencies, cpuMs: cpuTimeMs(Deno.pid), events, closed }));
      Deno.exit(0);
    }
  }
}
