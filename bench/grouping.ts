/**
 * What message grouping saves, part of `deno task bench`; alone: `deno task bench grouping`.
 * Customers who write several quick messages in a row (BENCH_BURST messages, BENCH_GAP_MS apart:
 * "hi" / "I ordered a shirt" / "it has not come") are answered by one reply per grouping window.
 * The same bursts from BENCH_CUSTOMERS customers (each a new WhatsApp contact, signed Meta-shaped
 * posts) go to two apps on their own databases: grouping at the FAST default (GROUPING_FAST_MS,
 * 2 s), and the baseline with every window at 1 ms (one reply per message, as without grouping).
 * Counted: model calls and the bytes sent to the model (the stand-in's, as the calls carry them),
 * replies reaching the Graph stand-in, customers left unanswered. The model and Graph stand-ins run
 * in this process; each app runs its workers in it too (counts, not latencies, are measured).
 * Writes bench/results/grouping.md; its last line is
 * `grouping: <burst> messages -> <r> replies and <m> model calls per customer (baseline <r0>, <m0>)`.
 */
import { ensureDatabase, startEmbeddedPostgres } from "../src/db/embedded.ts";
import { applyMigrations } from "../src/db/migrate.ts";
import { buildApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { silentLogger } from "../src/shared/logger.ts";
import { replyBenchEnv, seedWhatsAppChannel } from "./_seed.ts";
import { metaMessageBody, postHeaders } from "./_meta.ts";

const CUSTOMERS = Number(Deno.env.get("BENCH_CUSTOMERS") ?? 20);
const BURST = Number(Deno.env.get("BENCH_BURST") ?? 3);
/** Between two messages of a burst: a quick typist, well inside the FAST window. */
const GAP_MS = Number(Deno.env.get("BENCH_GAP_MS") ?? 500);
const GROUPING_MS = 2000;
const RESULTS = "bench/results/grouping.md";
const APP_SECRET = "bench-app-secret";

/** What the stand-ins saw during one run. */
class Seen {
  modelCalls = 0;
  modelBytes = 0;
  replies = 0;

  /** OpenAI-compatible chat completions: one short paragraph (one WhatsApp message) at once. */
  model = async (req: Request): Promise<Response> => {
    const body = await req.text();
    this.modelCalls++;
    this.modelBytes += body.length;
    return Response.json({
      id: "chatcmpl-bench",
      object: "chat.completion",
      created: 1,
      model: JSON.parse(body).model,
      choices: [{
        index: 0,
        message: { role: "assistant", content: "It ships tomorrow." },
        finish_reason: "stop",
      }],
      usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 },
    });
  };

  /** The Graph API's messages endpoint: a new wamid per send. */
  graph = async (req: Request): Promise<Response> => {
    const body = await req.json();
    this.replies++;
    return Response.json({
      messaging_product: "whatsapp",
      contacts: [{ input: body.to, wa_id: body.to }],
      messages: [{ id: `wamid.out-${crypto.randomUUID()}` }],
    });
  };
}

interface Run {
  name: string;
  windowMs: number;
  messages: number;
  modelCalls: number;
  modelBytes: number;
  replies: number;
  unanswered: number;
  seconds: number;
}

async function runOnce(adminUrl: string, name: string, windowMs: number): Promise<Run> {
  await ensureDatabase(adminUrl, `bench_${name}`);
  const databaseUrl = adminUrl.replace(/\/postgres$/, `/bench_${name}`);
  await applyMigrations(databaseUrl);
  const seen = new Seen();
  const model = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, seen.model);
  const graph = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, seen.graph);
  const env = {
    ...replyBenchEnv(databaseUrl, {
      windowMs,
      modelUrl: `http://127.0.0.1:${model.addr.port}/v1`,
      graphUrl: `http://127.0.0.1:${graph.addr.port}`,
    }),
    // Grouping on: the FAST default the agent answers with; the others stay short, unused.
    ...(windowMs === GROUPING_MS ? { GROUPING_FAST_MS: String(GROUPING_MS) } : {}),
  };
  const phoneNumberId = `10654035${name === "grouping" ? 1 : 2}242922`;
  const channelId = await seedWhatsAppChannel(env, {
    email: `bench-${name}@example.test`,
    phoneNumberId,
    appSecret: APP_SECRET,
  });
  const app = await buildApp(loadConfig(env), { bootstrap: false, logger: silentLogger });
  const db = app.deps.db;
  const started = performance.now();
  try {
    // Each customer's burst, the customers 50 ms apart.
    await Promise.all(Array.from({ length: CUSTOMERS }, async (_, c) => {
      await new Promise((r) => setTimeout(r, c * 50));
      for (let i = 0; i < BURST; i++) {
        if (i) await new Promise((r) => setTimeout(r, GAP_MS));
        const body = metaMessageBody({
          phoneNumberId,
          from: `5511900${1000 + c}`,
          i: c,
          token: `${name}-${c}-${i}`,
        });
        const res = await app.fetch(
          new Request(`http://bench.test/webhooks/whatsapp/${channelId}`, {
            method: "POST",
            headers: postHeaders(body, APP_SECRET),
            body,
          }),
        );
        await res.body?.cancel();
        if (res.status !== 200) throw new Error(`${name}: post answered ${res.status}`);
      }
    }));
    // Done when every customer message was handled and nothing is left to send.
    const deadline = Date.now() + 60_000;
    let unanswered = -1;
    while (Date.now() < deadline) {
      const [received, open, pending] = await Promise.all([
        db.message.count({ where: { direction: "INBOUND" } }),
        db.message.count({ where: { direction: "INBOUND", answeredAt: null } }),
        db.message.count({ where: { direction: "OUTBOUND", status: "PENDING" } }),
      ]);
      unanswered = open;
      if (received === CUSTOMERS * BURST && open === 0 && pending === 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const seconds = (performance.now() - started) / 1000;
    return {
      name,
      windowMs,
      messages: CUSTOMERS * BURST,
      modelCalls: seen.modelCalls,
      modelBytes: seen.modelBytes,
      replies: seen.replies,
      unanswered,
      seconds,
    };
  } finally {
    await app.stop();
    await model.shutdown();
    await graph.shutdown();
  }
}

export async function runGroupingBench(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "switchboard-bench-grouping-" });
  await Deno.chmod(dir, 0o755);
  const pg = await startEmbeddedPostgres({ dir: `${dir}/data`, database: "postgres", persistent: false });
  try {
    const grouped = await runOnce(pg.adminUrl, "grouping", GROUPING_MS);
    const baseline = await runOnce(pg.adminUrl, "baseline", 1);
    const per = (n: number) => (n / CUSTOMERS).toFixed(2);
    const row = (r: Run) =>
      `| ${r.name} | ${r.windowMs} ms | ${r.messages} | ${r.modelCalls} (${per(r.modelCalls)}) | ${
        (r.modelBytes / 1024).toFixed(0)
      } KiB | ${r.replies} (${per(r.replies)}) | ${r.unanswered} | ${r.seconds.toFixed(1)} |`;
    const last = `grouping: ${BURST} messages -> ${per(grouped.replies)} replies and ${
      per(grouped.modelCalls)
    } model calls per customer (baseline ${per(baseline.replies)}, ${per(baseline.modelCalls)})`;
    const md = `# Message grouping

Measured ${new Date().toISOString()} by \`deno task bench grouping\` (bench/grouping.ts) on
${navigator.hardwareConcurrency} cores. ${CUSTOMERS} WhatsApp customers each write ${BURST} messages
${GAP_MS} ms apart (signed Meta-shaped posts); the agent answers FAST. "grouping": the FAST window
at its default (${GROUPING_MS} ms); "baseline": every window at 1 ms, one reply per message. The
model stand-in answers one short paragraph at once (one WhatsApp message per reply); model bytes
are the request bodies it received (the prompts, whose tokens a model bills).

| run | window | customer messages | model calls (per customer) | model bytes | replies sent (per customer) | unanswered | seconds |
|---|---|---|---|---|---|---|---|
${row(grouped)}
${row(baseline)}

Grouping: ${(grouped.modelCalls / baseline.modelCalls).toFixed(2)}x the model calls, ${
      (grouped.modelBytes / baseline.modelBytes).toFixed(2)
    }x the bytes sent to the model, ${(grouped.replies / baseline.replies).toFixed(2)}x the replies.

${last}
`;
    await Deno.writeTextFile(RESULTS, md);
    console.log(md);
    return last;
  } finally {
    await pg.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) await runGroupingBench();
