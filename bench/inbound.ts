/**
 * The inbound WhatsApp benchmark (issue 9 section 6, the "inbound 200" part), part of `deno task bench`;
 * alone: `deno task bench inbound`. One server process (as `deno task start` runs it, workers on),
 * a signed Meta-shaped text message posted to POST /webhooks/whatsapp/{channelId} in a closed loop
 * from a separate process, against GET /healthz (one `SELECT 1`) of the same server as the baseline,
 * in alternating rounds: closed loop (saturation; every post the same WhatsApp id, deduplicated by
 * the worker), then open loop at 50 and 200 new messages/s (goal: inbound p99 < 20 ms).
 * Writes bench/results/inbound.md. Not part of the tests.
 */
import { ensureDatabase, freePort, startEmbeddedPostgres } from "../src/db/embedded.ts";
import { applyMigrations } from "../src/db/migrate.ts";
import { buildApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { silentLogger } from "../src/shared/logger.ts";
import { createAgent } from "../src/agents/mod.ts";
import { createChannel } from "../src/channels/service.ts";
import { hubSignature } from "../src/channels/whatsapp/signature.ts";
import { benchEnv, seedOwner } from "./_seed.ts";
import pg from "pg";

const ROUNDS = Number(Deno.env.get("BENCH_ROUNDS") ?? 5);
const DURATION_MS = Number(Deno.env.get("BENCH_DURATION_MS") ?? 4000);
const CONCURRENCY = Number(Deno.env.get("BENCH_CONCURRENCY") ?? 8);
// BENCH_WORKERS=0 measures the accept path alone, into a file of its own.
const RESULTS = Deno.env.get("BENCH_WORKERS") === "0"
  ? "bench/results/inbound-accept-only.md"
  : "bench/results/inbound.md";
const APP_SECRET = "bench-app-secret";
const RATES = [50, 200];

async function query(databaseUrl: string, sql: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query<{ n: number }>(sql)).rows[0].n;
  } finally {
    await client.end();
  }
}

/** Waits until the worker has taken every queued inbound job (so each scenario starts from rest). */
async function drained(databaseUrl: string): Promise<void> {
  // BENCH_WORKERS=0 (bench/serve_app.ts): no worker, the accept path alone; nothing drains.
  if (Deno.env.get("BENCH_WORKERS") === "0") return;
  const pending = `SELECT count(*)::int AS n FROM pgboss.job
    WHERE name = 'whatsapp-inbound' AND state IN ('created', 'retry', 'active')`;
  while (await query(databaseUrl, pending) > 0) await new Promise((r) => setTimeout(r, 200));
}

interface LoadResult {
  requests: number;
  errors: number;
  rps: number;
  p50: number;
  p99: number;
}

export async function runInboundBench(): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "switchboard-bench-" });
  await Deno.chmod(dir, 0o755);
  const pg = await startEmbeddedPostgres({ dir: `${dir}/data`, database: "postgres", persistent: false });
  let child: Deno.ChildProcess | undefined;
  try {
    await ensureDatabase(pg.adminUrl, "bench");
    const databaseUrl = pg.adminUrl.replace(/\/postgres$/, "/bench");
    await applyMigrations(databaseUrl);
    const env = { ...benchEnv(databaseUrl), APP_ENV: "production", NODE_ENV: "production" };

    const seeder = await buildApp(loadConfig(env), {
      bootstrap: false,
      logger: silentLogger,
      workers: false,
    });
    const ctx = await seedOwner(seeder.deps, "bench@example.test");
    const agent = await createAgent(ctx, { name: "Ana", jobName: "Bench Co" });
    const phoneNumberId = "106540352242922";
    const channel = await createChannel(ctx, agent.id, {
      type: "WHATSAPP",
      label: "Bench",
      config: {
        phoneNumberId,
        accessToken: "bench-token",
        appSecret: APP_SECRET,
        verifyToken: "bench-verify",
      },
    });
    await seeder.stop();

    const port = freePort();
    child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--unstable-no-legacy-abort", "bench/serve_app.ts"],
      env: { ...env, PORT: String(port) },
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let seen = "";
    while (!seen.includes("ready")) {
      const { value, done } = await reader.read();
      if (done) throw new Error("the server exited before it was ready");
      seen += value;
    }
    reader.releaseLock();
    child.stdout.cancel().catch(() => {});

    const body = JSON.stringify({
      object: "whatsapp_business_account",
      entry: [{
        id: "102290129340398",
        changes: [{
          field: "messages",
          value: {
            messaging_product: "whatsapp",
            metadata: { display_phone_number: "15550783881", phone_number_id: phoneNumberId },
            contacts: [{ profile: { name: "Sheena Nelson" }, wa_id: "16505551234" }],
            messages: [{
              from: "16505551234",
              id: "wamid.bench-1",
              timestamp: "1749416383",
              type: "text",
              text: { body: "Does it come in another color?" },
            }],
          },
        }],
      }],
    });
    const scenarios: Record<
      string,
      { url: string; method?: string; headers?: Record<string, string>; body?: string }
    > = {
      healthz: { url: `http://127.0.0.1:${port}/healthz` },
      inbound: {
        url: `http://127.0.0.1:${port}/webhooks/whatsapp/${channel.id}`,
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-hub-signature-256": hubSignature(body, APP_SECRET),
        },
        body,
      },
    };
    for (const [name, s] of Object.entries(scenarios)) {
      const res = await fetch(s.url, { method: s.method ?? "GET", headers: s.headers, body: s.body });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`${name}: status ${res.status}`);
    }

    const load = async (s: object) => {
      const out = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          "bench/load.ts",
          JSON.stringify({ ...s, concurrency: CONCURRENCY, durationMs: DURATION_MS, warmupMs: 1000 }),
        ],
        stdout: "piped",
        stderr: "inherit",
      }).output();
      return JSON.parse(new TextDecoder().decode(out.stdout)) as LoadResult;
    };
    const results: Record<string, LoadResult[]> = { healthz: [], inbound: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, s] of Object.entries(scenarios)) {
        await drained(databaseUrl);
        const r = await load(s);
        if (r.errors) throw new Error(`${name}: ${r.errors} failed requests`);
        results[name].push(r);
        console.error(
          `round ${round + 1} ${name}: ${r.rps.toFixed(0)} req/s p50 ${r.p50.toFixed(2)} ms p99 ${
            r.p99.toFixed(2)
          } ms`,
        );
      }
    }
    // Open loop at fixed rates, new messages each time (stored and deduplicated by the worker).
    const rateLoad = async (rate: number, inbound: boolean, run: string) => {
      const out = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          "bench/load_rate.ts",
          JSON.stringify({
            url: inbound ? scenarios.inbound.url : scenarios.healthz.url,
            rate,
            durationMs: DURATION_MS,
            ...(inbound ? { inbound: { appSecret: APP_SECRET, phoneNumberId, run } } : {}),
          }),
        ],
        stdout: "piped",
        stderr: "inherit",
      }).output();
      return JSON.parse(new TextDecoder().decode(out.stdout)) as LoadResult;
    };
    const rates: Record<string, LoadResult[]> = {};
    for (let round = 0; round < ROUNDS; round++) {
      for (const rate of RATES) {
        for (const inbound of [false, true]) {
          const key = `${inbound ? "inbound" : "healthz"}@${rate}`;
          await drained(databaseUrl);
          const r = await rateLoad(rate, inbound, `r${round}-${rate}`);
          if (r.errors) throw new Error(`${key}: ${r.errors} failed requests`);
          (rates[key] ??= []).push(r);
          console.error(`round ${round + 1} ${key}/s: p50 ${r.p50.toFixed(2)} ms p99 ${r.p99.toFixed(2)} ms`);
        }
      }
    }
    await drained(databaseUrl);
    const stored = await query(databaseUrl, `SELECT count(*)::int AS n FROM "Message"`);

    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const mr = (key: string, k: "p50" | "p99") => median(rates[key].map((r) => r[k]));
    const rateRows = RATES.map((rate) =>
      `| ${rate}/s | ${mr(`healthz@${rate}`, "p50").toFixed(2)} | ${
        mr(`healthz@${rate}`, "p99").toFixed(2)
      } | ${mr(`inbound@${rate}`, "p50").toFixed(2)} | ${mr(`inbound@${rate}`, "p99").toFixed(2)} |`
    ).join("\n");
    const m = (name: string, k: keyof LoadResult) => median(results[name].map((r) => r[k]));
    const ratio = median(results.inbound.map((r, i) => r.rps / results.healthz[i].rps));
    const row = (name: string, label: string) =>
      `| ${label} | ${m(name, "rps").toFixed(0)} | ${m(name, "p50").toFixed(2)} | ${
        m(name, "p99").toFixed(2)
      } |`;
    const md = `# POST /webhooks/whatsapp/{channelId}: the inbound 200

Measured ${new Date().toISOString()} by \`deno task bench inbound\` on ${navigator.hardwareConcurrency} cores,
Deno ${Deno.version.deno}; one server process (workers ${
      Deno.env.get("BENCH_WORKERS") === "0" ? "OFF: the accept path alone" : "on"
    }), load from a separate process,
${CONCURRENCY} connections in a closed loop, ${ROUNDS} rounds of ${DURATION_MS / 1000} s per side,
alternating; medians shown.

| side | req/s | p50 ms | p99 ms |
|---|---|---|---|
${row("healthz", "baseline: GET /healthz (SELECT 1)")}
${row("inbound", "signed inbound text message (verify, parse, one job INSERT)")}

Open loop (requests sent on schedule, as Meta sends them), each inbound post a new message of one of
50 senders, stored by the worker meanwhile (${stored} messages stored in all):

| rate | healthz p50 ms | healthz p99 ms | inbound p50 ms | inbound p99 ms |
|---|---|---|---|---|
${rateRows}

| figure | value | goal |
|---|---|---|
| inbound / healthz (throughput) | ${ratio.toFixed(2)}x | |
| inbound p99, closed loop (saturated) | ${m("inbound", "p99").toFixed(2)} ms | |
${
      RATES.map((r) => `| inbound p99 at ${r}/s | ${mr(`inbound@${r}`, "p99").toFixed(2)} ms | < 20 ms |`)
        .join("\n")
    }
`;
    await Deno.writeTextFile(RESULTS, md);
    console.log(md);
  } finally {
    if (child) {
      child.kill("SIGTERM");
      await child.status;
    }
    await pg.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}
