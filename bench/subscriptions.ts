/**
 * Subscriptions benchmark, part of `deno task bench`; alone:
 * `deno task bench subscriptions`. N graphql-ws subscribers of `conversationEvents` on one server
 * process (bench/serve_app.ts), one event a second published through another app instance on the
 * same database; publish → receive latency per subscriber, the server's memory, and the CPU of the
 * server and of the clients, which run in a process of their own (bench/_ws_clients.ts). Baseline
 * in the same run: bench/_ws_broadcast.ts, which forwards each NOTIFY payload to N plain WebSockets
 * (the transport floor: no protocol, no authentication, no reads). BENCH_SUBSCRIBERS (sizes,
 * default 1000,5000), BENCH_SUBSCRIPTION_EVENTS (default 30), BENCH_SUBSCRIPTION_ROWS (the graphql-ws
 * rows besides the baseline: `one` (one credential), `sessions` (a login session each); default
 * both); BENCH_CPU_PROFILE=<prefix> writes the server's CPU profile of the events of each graphql-ws
 * row to <prefix>-<one|distinct>-<N>. Each row's per-event p99 and max, and the sockets the server
 * closed, go to stderr.
 * Writes bench/results/subscriptions.md.
 */
import { ensureDatabase, freePort, startEmbeddedPostgres } from "../src/db/embedded.ts";
import { applyMigrations } from "../src/db/migrate.ts";
import { buildApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { silentLogger } from "../src/shared/logger.ts";
import { openSession } from "../src/auth/sessions.ts";
import { createAgent } from "../src/agents/mod.ts";
import { benchEnv, seedOwner } from "./_seed.ts";
import { cpuTimeMs } from "./_cpu.ts";
import { denoScript, spawnReady } from "./_spawn.ts";

const SIZES = (Deno.env.get("BENCH_SUBSCRIBERS") ?? "1000,5000").split(",").map(Number);
const EVENTS = Number(Deno.env.get("BENCH_SUBSCRIPTION_EVENTS") ?? 30);
const RESULTS = "bench/results/subscriptions.md";
const ROWS = (Deno.env.get("BENCH_SUBSCRIPTION_ROWS") ?? "one,sessions").split(",");

interface Figures {
  subscribers: number;
  received: number;
  expected: number;
  p50: number;
  p99: number;
  /** The median of the events' own p99s: one event hit by a burst of others' work weighs less. */
  eventP99Median: number;
  max: number;
  rssBeforeMb: number;
  rssAfterMb: number;
  /** CPU time per event of the server process and of the clients' process, ms. */
  serverCpuMs: number;
  clientsCpuMs: number;
  /** Connecting and subscribing every socket, s. */
  connectSeconds: number;
  /** The machine's 1-minute load average as the events began and as they ended (others' work shows). */
  load: string;
}

/** The graphql-ws limits raised for the bench: every socket comes from 127.0.0.1. */
const LIMITS = {
  LIVE_MAX_SOCKETS_PER_ADDRESS: "100000",
  LIVE_MAX_SOCKETS_PER_CREDENTIAL: "100000",
  // The server only serves the feeds (no job polling in its CPU figures).
  BENCH_WORKERS: "0",
};

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];

function rssMb(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
}

async function spawn(script: string, env: Record<string, string>): Promise<Deno.ChildProcess> {
  return (await spawnReady(...denoScript(script), env)).child;
}

/** Lines a child process prints on stdout, one at a time. */
function lineReader(child: Deno.ChildProcess) {
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let pending: Promise<ReadableStreamReadResult<string>> | undefined;
  return async (timeoutMs = 600_000): Promise<string | null> => {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const end = buffer.indexOf("\n");
      if (end >= 0) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 1);
        return line;
      }
      const left = deadline - performance.now();
      if (left <= 0) return null;
      let timer: ReturnType<typeof setTimeout> | undefined;
      // A read that lost the race stays pending for the next call (its chunk must not be lost).
      pending ??= reader.read();
      const chunk = await Promise.race([
        pending,
        new Promise<null>((r) => timer = setTimeout(() => r(null), left)),
      ]);
      clearTimeout(timer);
      if (chunk === null) return null;
      pending = undefined;
      if (chunk.done) throw new Error("the clients' process exited");
      buffer += chunk.value;
    }
  };
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
    const credentialsFile = (distinct: boolean) => `${dir}/credentials-${distinct ? "distinct" : "one"}.json`;
    for (const distinct of [false, true]) {
      await Deno.writeTextFile(
        credentialsFile(distinct),
        JSON.stringify({ workspaceId, agentId: agent.id, tokens: distinct ? tokens : [token] }),
      );
    }
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
      const profile = Deno.env.get("BENCH_CPU_PROFILE");
      const profileTo = profile &&
        `${profile}-${graphqlWs ? (distinct ? "distinct" : "one") : "baseline"}-${size}`;
      const server = await spawn(script, {
        ...env,
        ...LIMITS,
        PORT: String(port),
        ...(profileTo ? { BENCH_CPU_PROFILE: profileTo } : {}),
        BENCH_LOG_LEVEL: Deno.env.get("BENCH_LOG_LEVEL") ?? "error",
      });
      try {
        const rssBeforeMb = rssMb(server.pid);
        const clients = new Deno.Command(Deno.execPath(), {
          args: ["run", "-A", "bench/_ws_clients.ts"],
          env: {
            URL: `ws://127.0.0.1:${port}/graphql`,
            SIZE: String(size),
            MODE: graphqlWs ? "graphql-ws" : "plain",
            CREDENTIALS: credentialsFile(distinct),
          },
          stdin: "piped",
          stdout: "piped",
          stderr: "inherit",
        }).spawn();
        const line = lineReader(clients);
        const stdin = clients.stdin.getWriter();
        const tell = (text: string) => stdin.write(new TextEncoder().encode(`${text}\n`));
        try {
          const connectStarted = performance.now();
          if (await line() !== "ready") throw new Error(`${label}: the clients did not connect`);
          const connectSeconds = (performance.now() - connectStarted) / 1000;
          // Warm-up: an event every subscriber receives (so all are subscribed on the server).
          for (let tries = 0;; tries++) {
            await publishOne(-1 - tries);
            if (await line(5000) === "warm") break;
            if (tries >= 5) throw new Error(`${label}: not every subscriber received the warm-up`);
          }
          await new Promise((r) => setTimeout(r, 1000));
          await tell("start");
          if (await line(60_000) !== "started") throw new Error(`${label}: the clients did not start`);
          const loadAtStart = await load();
          const rssAfterMb = rssMb(server.pid);
          const serverCpu = cpuTimeMs(server.pid);
          const clientsCpu = cpuTimeMs(clients.pid);
          // The profile of the connections is written now; the next one is the events' alone.
          if (profileTo && graphqlWs) server.kill("SIGUSR2");
          for (let i = 0; i < EVENTS; i++) {
            await tell(`t ${performance.timeOrigin + performance.now()}`);
            await publishOne(i);
            await new Promise((r) => setTimeout(r, 1000));
          }
          await tell("report");
          const report = JSON.parse((await line(120_000)) ?? "null") as {
            latencies: number[];
            cpuMs: number;
            events: number[][];
            closed: Record<string, number>;
          };
          console.error(
            `${label} ${size}: per event [received, p99, max]: ${
              JSON.stringify(report.events)
            }; closed by the server: ${JSON.stringify(report.closed)}`,
          );
          const latencies = report.latencies;
          const serverCpuMs = (cpuTimeMs(server.pid) - serverCpu) / EVENTS;
          if (profileTo && graphqlWs) {
            const written = Deno.statSync(profileTo).mtime!.getTime();
            server.kill("SIGUSR2");
            while (Deno.statSync(profileTo).mtime!.getTime() === written) {
              await new Promise((r) => setTimeout(r, 100));
            }
          }
          const clientsCpuMs = (report.cpuMs - clientsCpu) / EVENTS;
          latencies.sort((a, b) => a - b);
          const f: Figures = {
            subscribers: size,
            received: latencies.length,
            expected: size * EVENTS,
            p50: Math.round(pct(latencies, 50)),
            p99: Math.round(pct(latencies, 99)),
            max: Math.round(latencies[latencies.length - 1] ?? 0),
            eventP99Median: pct(report.events.map(([, p99]) => p99).sort((a, b) => a - b), 50) ?? 0,
            rssBeforeMb,
            rssAfterMb,
            serverCpuMs: Math.round(serverCpuMs),
            clientsCpuMs: Math.round(clientsCpuMs),
            connectSeconds: Math.round(connectSeconds * 10) / 10,
            load: `${loadAtStart} → ${await load()}`,
          };
          console.error(`${label} ${size}: ${JSON.stringify(f)}`);
          return f;
        } finally {
          try {
            clients.kill("SIGTERM");
          } catch { /* it has exited after its report */ }
          await clients.status;
        }
      } finally {
        server.kill("SIGTERM");
        await server.status;
      }
    };

    for (const size of SIZES) {
      const base = await scenario("baseline", "bench/_ws_broadcast.ts", size, false);
      const ours = ROWS.includes("one")
        ? await scenario("graphql-ws, one credential", "bench/serve_app.ts", size, true)
        : undefined;
      const distinct = ROWS.includes("sessions")
        ? await scenario("graphql-ws, a session each", "bench/serve_app.ts", size, true, true)
        : undefined;
      const row = (label: string, f: Figures, ratio: string) =>
        `| ${label} | ${f.subscribers} | ${f.received}/${f.expected} | ${f.p50} | ${f.p99} | ${f.max} | ${f.serverCpuMs} | ${f.clientsCpuMs} | ${f.rssBeforeMb} → ${f.rssAfterMb} | ${f.connectSeconds} | ${ratio} | ${f.eventP99Median} | ${f.load} |`;
      rows.push(row("NOTIFY → plain WebSocket (baseline)", base, "1.00x"));
      const ratio = (f: Figures) => `${(f.p99 / Math.max(1, base.p99)).toFixed(2)}x`;
      if (ours) rows.push(row("graphql-ws, one credential", ours, ratio(ours)));
      if (distinct) rows.push(row("graphql-ws, a login session each", distinct, ratio(distinct)));
    }
    await publisher.stop();
  } finally {
    await pg.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
  const md = `# Subscriptions

Measured ${new Date().toISOString()} by \`deno task bench subscriptions\` (bench/subscriptions.ts) on
${navigator.hardwareConcurrency} cores. One server process (bench/serve_app.ts) with N graphql-ws
subscribers of \`conversationEvents\` (selection: type, conversation { id status }, message { id
content sender }), all of one workspace and one role (OWNER), either all with one credential or
each with its own login session. Either way the sockets share one execution per role and document
(src/live/shared_subscriptions.ts); credentials are read again only when PostgreSQL announces a
change to them (src/live/credentials.ts), none during the run. ${EVENTS} events, one a second, each a message inserted and
\`message.received\` published through another app instance (the bench process) on the same
database. Latency: publish call → the event received by the client (ms, wall clock of both
processes). The clients run in a process of their own (bench/_ws_clients.ts) on the same cores;
CPU ms per event of each process is shown. Baseline: the same NOTIFY forwarded as it is to N plain
WebSockets (bench/_ws_broadcast.ts). Ratio: p99 against the baseline's p99 (the p99 of all
latencies is set by the worst event or two; the median of each event's own p99 is shown too, less
moved by a burst of others' work). The machine is shared:
the load average of the whole run (${loadBefore} → ${await load()}) and of each row's events are
shown, and a row measured under more load than the baseline's is not comparable with it.

| server | subscribers | received | p50 | p99 | max | server CPU ms/event | clients CPU ms/event | server RSS MB (before → with subscribers) | connect s | p99 ratio | median of the events' p99 | load average (events) |
|---|---|---|---|---|---|---|---|---|---|---|---|---|
${rows.join("\n")}
`;
  await Deno.writeTextFile(RESULTS, md);
  console.log(md);
  return md;
}

if (import.meta.main) await runSubscriptionsBench();
