/**
 * Subscriptions benchmark (issue 9 section 6), part of `deno task bench`; alone:
 * `deno task bench subscriptions`. N graphql-ws subscribers of `conversationEvents` on one server
 * process (bench/serve_app.ts), one event a second published through another app instance on the
 * same database; publish → receive latency per subscriber and the server's memory. Baseline in the
 * same run: bench/_ws_broadcast.ts, which forwards each NOTIFY payload to N plain WebSockets (the
 * transport floor: no protocol, no authentication, no reads). Clients run in this process, so they
 * share the machine's cores with the server. Writes bench/results/subscriptions.md.
 */
import { ensureDatabase, freePort, startEmbeddedPostgres } from "../src/db/embedded.ts";
import { applyMigrations } from "../src/db/migrate.ts";
import { buildApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { silentLogger } from "../src/shared/logger.ts";
import { openSession } from "../src/auth/sessions.ts";
import { createAgent } from "../src/agents/mod.ts";
import { benchEnv, seedOwner } from "./_seed.ts";

const SIZES = (Deno.env.get("BENCH_SUBSCRIBERS") ?? "1000,5000").split(",").map(Number);
const EVENTS = Number(Deno.env.get("BENCH_SUBSCRIPTION_EVENTS") ?? 10);
const RESULTS = "bench/results/subscriptions.md";

interface Figures {
  subscribers: number;
  received: number;
  expected: number;
  p50: number;
  p99: number;
  max: number;
  rssBeforeMb: number;
  rssAfterMb: number;
}

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];

function rssMb(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
}

async function spawn(script: string, env: Record<string, string>): Promise<Deno.ChildProcess> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-no-legacy-abort", script],
    env,
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  while (!seen.includes("ready")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${script} exited before it was ready`);
    seen += value;
  }
  reader.releaseLock();
  child.stdout.cancel().catch(() => {});
  return child;
}

/** One subscriber: resolves `ready` once subscribed; calls `onEvent` for each event it receives. */
function connect(
  url: string,
  graphqlWs: { token: string; workspaceId: string; agentId: string } | null,
  onEvent: () => void,
): { ready: Promise<void>; close(): void } {
  const socket = graphqlWs ? new WebSocket(url, "graphql-transport-ws") : new WebSocket(url);
  const ready = new Promise<void>((resolve, reject) => {
    socket.onerror = () => reject(new Error("socket error"));
    socket.onopen = () => {
      if (!graphqlWs) return;
      socket.send(JSON.stringify({
        type: "connection_init",
        payload: { authorization: `Bearer ${graphqlWs.token}`, "x-workspace-id": graphqlWs.workspaceId },
      }));
    };
    socket.onmessage = (e) => {
      const data = String(e.data);
      if (!graphqlWs) return data === "subscribed" ? resolve() : onEvent();
      const msg = JSON.parse(data);
      if (msg.type === "connection_ack") {
        socket.send(JSON.stringify({
          id: "1",
          type: "subscribe",
          payload: {
            query: `subscription ($a: ID!) { conversationEvents(agentId: $a) {
              type conversation { id status } message { id content sender } } }`,
            variables: { a: graphqlWs.agentId },
          },
        }));
        resolve(); // subscribed once the server handles it: the warm-up event confirms it
      } else if (msg.type === "next") onEvent();
      else if (msg.type === "error") reject(new Error(data));
    };
  });
  return { ready, close: () => socket.close() };
}

export async function runSubscriptionsBench(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "switchboard-bench-subscriptions-" });
  await Deno.chmod(dir, 0o755);
  const pg = await startEmbeddedPostgres({ dir: `${dir}/data`, database: "postgres", persistent: false });
  const rows: string[] = [];
  const load = () => Deno.readTextFile("/proc/loadavg").then((t) => t.split(" ")[0]).catch(() => "?");
  const loadBefore = await load();
  try {
    await ensureDatabase(pg.adminUrl, "bench");
    const url = pg.adminUrl.replace(/\/postgres$/, "/bench");
    await applyMigrations(url);
    const env = benchEnv(url);
    const publisher = await buildApp(loadConfig({ ...env, PORT: "0" }), {
      logger: silentLogger,
      bootstrap: false,
      workers: false,
    });
    const deps = publisher.deps;
    const owner = await seedOwner(deps, "bench-live@example.test");
    const agent = await createAgent(owner, { name: "Ana", jobName: "Bench" } as never);
    const token = await openSession(deps, owner.actor.userId!);
    // One login session per subscriber, for the "distinct" rows (each is checked again per event).
    const tokens: string[] = [];
    for (let i = 0; i < Math.max(...SIZES); i++) tokens.push(await openSession(deps, owner.actor.userId!));
    const workspaceId = owner.actor.workspaceId;
    const channel = await deps.db.channel.create({
      data: { workspaceId, agentId: agent.id, label: "Bench" },
    });
    const contact = await deps.db.contact.create({ data: { workspaceId, externalId: "1", name: "C" } });
    const conversation = await deps.db.conversation.create({
      data: { workspaceId, agentId: agent.id, channelId: channel.id, contactId: contact.id },
    });
    const publishOne = async (n: number) => {
      const message = await deps.db.message.create({
        data: {
          conversationId: conversation.id,
          channelId: channel.id,
          direction: "INBOUND",
          senderKind: "CUSTOMER",
          content: `event ${n}`,
        },
      });
      await deps.db.$transaction((tx) =>
        deps.events.publish(tx, {
          type: "message.received",
          workspaceId,
          agentId: agent.id,
          conversationId: conversation.id,
          data: { message: { id: message.id, type: "TEXT", content: message.content } },
        })
      );
    };

    const scenario = async (
      label: string,
      script: string,
      size: number,
      graphqlWs: boolean,
      distinct = false,
    ) => {
      const port = await freePort();
      const server = await spawn(script, { ...env, PORT: String(port) });
      try {
        const rssBeforeMb = rssMb(server.pid);
        let current = -1;
        let sentAt = 0;
        const latencies: number[] = [];
        let warm = 0;
        const onEvent = () => {
          if (current < 0) warm++;
          else latencies.push(performance.now() - sentAt);
        };
        const clients = [];
        for (let i = 0; i < size; i += 100) {
          const batch = Array.from({ length: Math.min(100, size - i) }, (_, j) =>
            connect(
              `ws://127.0.0.1:${port}/graphql`,
              graphqlWs ? { token: distinct ? tokens[i + j] : token, workspaceId, agentId: agent.id } : null,
              onEvent,
            ));
          await Promise.all(batch.map((c) => c.ready));
          clients.push(...batch);
        }
        // Warm-up: an event every subscriber receives (so all are subscribed on the server).
        for (let tries = 0;; tries++) {
          warm = 0;
          await publishOne(-1 - tries);
          const deadline = performance.now() + 5000;
          while (warm < size && performance.now() < deadline) await new Promise((r) => setTimeout(r, 50));
          if (warm >= size) break;
          if (tries >= 5) throw new Error(`${label}: ${warm} of ${size} subscribers received the warm-up`);
        }
        await new Promise((r) => setTimeout(r, 1000));
        const rssAfterMb = rssMb(server.pid);
        for (let i = 0; i < EVENTS; i++) {
          current = i;
          sentAt = performance.now();
          await publishOne(i);
          await new Promise((r) => setTimeout(r, 1000));
        }
        // The last event's receipts, before the clients go (at most 10 s).
        const deadline = performance.now() + 10_000;
        while (latencies.length < size * EVENTS && performance.now() < deadline) {
          await new Promise((r) => setTimeout(r, 50));
        }
        for (const c of clients) c.close();
        latencies.sort((a, b) => a - b);
        const f: Figures = {
          subscribers: size,
          received: latencies.length,
          expected: size * EVENTS,
          p50: Math.round(pct(latencies, 50)),
          p99: Math.round(pct(latencies, 99)),
          max: Math.round(latencies[latencies.length - 1] ?? 0),
          rssBeforeMb,
          rssAfterMb,
        };
        console.error(`${label} ${size}: ${JSON.stringify(f)}`);
        return f;
      } finally {
        server.kill("SIGTERM");
        await server.status;
      }
    };

    for (const size of SIZES) {
      const base = await scenario("baseline", "bench/_ws_broadcast.ts", size, false);
      const ours = await scenario("graphql-ws, one credential", "bench/serve_app.ts", size, true);
      const distinct = await scenario("graphql-ws, a session each", "bench/serve_app.ts", size, true, true);
      const row = (label: string, f: Figures, ratio: string) =>
        `| ${label} | ${f.subscribers} | ${f.received}/${f.expected} | ${f.p50} | ${f.p99} | ${f.max} | ${f.rssBeforeMb} → ${f.rssAfterMb} | ${ratio} |`;
      rows.push(row("NOTIFY → plain WebSocket (baseline)", base, "1.00x"));
      const ratio = (f: Figures) => `${(f.p99 / Math.max(1, base.p99)).toFixed(2)}x`;
      rows.push(row("graphql-ws, one credential (one shared execution)", ours, ratio(ours)));
      rows.push(row("graphql-ws, a login session each (checked per event)", distinct, ratio(distinct)));
    }
    await publisher.stop();
  } finally {
    await pg.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
  const md = `# Subscriptions

Measured ${new Date().toISOString()} by \`deno task bench subscriptions\` (bench/subscriptions.ts) on
${navigator.hardwareConcurrency} cores. One server process with N graphql-ws subscribers of
\`conversationEvents\` (selection: type, conversation { id status }, message { id content sender }),
all of one workspace, either all with one credential (identical subscriptions share one execution:
src/live/shared_subscriptions.ts) or each with its own login session (one execution and one
credential check per subscriber and event; rows are read once per role and selection); ${EVENTS} events, one a second, each a message inserted and
\`message.received\` published through another app instance on the same database. Latency: publish
call → the event received by the client (ms). Baseline: the same NOTIFY forwarded to N plain
WebSockets (bench/_ws_broadcast.ts). Clients run in the benchmark process, on the same cores, so
both rows include the clients' own work. Ratio: p99 against the baseline's p99. Load average
before → after: ${loadBefore} → ${await load()}.

| server | subscribers | received | p50 | p99 | max | server RSS MB (before → with subscribers) | p99 ratio |
|---|---|---|---|---|---|---|---|
${rows.join("\n")}
`;
  await Deno.writeTextFile(RESULTS, md);
  console.log(md);
  return md;
}

if (import.meta.main) await runSubscriptionsBench();
