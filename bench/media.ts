/**
 * The voice note → reply benchmark, part of `deno task bench`; alone: `deno task bench media`. One
 * app (workers on, windows at BENCH_WINDOW_MS) in this process beside its stand-ins on 127.0.0.1: the
 * Graph API (media description, file, sends), the transcription endpoint and the model, each
 * answering at once and timing itself. Signed voice notes are posted open-loop at BENCH_RATE (20/s),
 * each from a new sender; per note, the platform's own time = the reply's arrival at the Graph
 * stand-in − the 200 of the post − the window − the stand-ins' own time (Graph media calls,
 * transcription, model). Rounds alternate with the same number of text messages, the baseline of
 * the same run (text → reply, without media work): the report gives both and their ratio, since the
 * machine is shared and noisy. Writes bench/results/media.md. Not part of the tests.
 */
import { createHash, createHmac } from "node:crypto";
import { ensureDatabase, startEmbeddedPostgres } from "../src/db/embedded.ts";
import { applyMigrations } from "../src/db/migrate.ts";
import { buildApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { silentLogger } from "../src/shared/logger.ts";
import { createAgent } from "../src/agents/mod.ts";
import { createChannel } from "../src/channels/service.ts";
import { benchEnv, seedOwner } from "./_seed.ts";

const ROUNDS = Number(Deno.env.get("BENCH_ROUNDS") ?? 3);
const DURATION_MS = Number(Deno.env.get("BENCH_DURATION_MS") ?? 5000);
const RATE = Number(Deno.env.get("BENCH_RATE") ?? 20);
const WINDOW_MS = Number(Deno.env.get("BENCH_WINDOW_MS") ?? 1);
const DRAIN_TIMEOUT_MS = 30_000;
const APP_SECRET = "bench-app-secret";
const PHONE_NUMBER_ID = "106540352242933";
const AUDIO = new TextEncoder().encode("bench voice note bytes ".repeat(200));
const AUDIO_SHA = createHash("sha256").update(AUDIO).digest("hex");

/** Per sender (the contact's wa_id): when its post was answered, and the stand-ins' time spent for it. */
const posted = new Map<string, number>();
const standinMs = new Map<string, number>();
const replied = new Map<string, number>();
const addStandin = (who: string, ms: number) => standinMs.set(who, (standinMs.get(who) ?? 0) + ms);

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

export async function runMediaBench(): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "switchboard-bench-media-" });
  await Deno.chmod(dir, 0o755);
  const pg = await startEmbeddedPostgres({ dir: `${dir}/data`, database: "postgres", persistent: false });
  let graphUrl = "";
  // The media id is the sender's wa_id, so every call is put to its note.
  const graph = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const started = performance.now();
    const path = new URL(req.url).pathname;
    if (req.method === "POST") {
      const body = await req.json();
      replied.set(body.to, performance.now());
      return Response.json({ messaging_product: "whatsapp", messages: [{ id: `wamid.${body.to}` }] });
    }
    const file = /^\/file\/(.+)$/.exec(path);
    const id = file ? file[1] : path.slice(1);
    const answer = file ? new Response(AUDIO, { headers: { "content-type": "audio/ogg" } }) : Response.json({
      url: `${graphUrl}/file/${id}`,
      mime_type: "audio/ogg; codecs=opus",
      sha256: AUDIO_SHA,
      file_size: AUDIO.length,
      id,
      messaging_product: "whatsapp",
    });
    addStandin(id, performance.now() - started);
    return answer;
  });
  graphUrl = `http://127.0.0.1:${graph.addr.port}`;
  const model = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const started = performance.now();
    const path = new URL(req.url).pathname;
    if (path.endsWith("/audio/transcriptions")) {
      const form = await req.formData();
      await (form.get("file") as File).arrayBuffer();
      // The note's sender is not in the upload: the transcript names nothing, the time goes to "audio".
      addStandin("audio", performance.now() - started);
      return Response.json({ text: "I would like to know where my order is" });
    }
    const body = await req.json();
    const who = /sender:(\d+)/.exec(body.messages[0].content)?.[1] ?? "";
    addStandin(who, performance.now() - started);
    return Response.json({
      id: "chatcmpl-bench",
      object: "chat.completion",
      created: 1,
      model: body.model,
      choices: [{
        index: 0,
        message: { role: "assistant", content: "It ships tomorrow." },
        finish_reason: "stop",
      }],
      usage: { prompt_tokens: 100, completion_tokens: 5, total_tokens: 105 },
    });
  });
  try {
    await ensureDatabase(pg.adminUrl, "bench");
    const databaseUrl = pg.adminUrl.replace(/\/postgres$/, "/bench");
    await applyMigrations(databaseUrl);
    const app = await buildApp(
      loadConfig({
        ...benchEnv(databaseUrl),
        APP_ENV: "production",
        GROUPING_FAST_MS: String(WINDOW_MS),
        OPENAI_API_KEY: "bench-key",
        OPENAI_BASE_URL: `http://127.0.0.1:${model.addr.port}/v1`,
        WHATSAPP_GRAPH_URL: graphUrl,
      }),
      { bootstrap: false, logger: silentLogger },
    );
    const ctx = await seedOwner(app.deps, "bench-media@example.test");
    const agent = await createAgent(ctx, { name: "Ana", jobName: "Bench Co", messageGroupingTime: "FAST" });
    const channel = await createChannel(ctx, agent.id, {
      type: "WHATSAPP",
      label: "Bench",
      config: {
        phoneNumberId: PHONE_NUMBER_ID,
        accessToken: "bench-token",
        appSecret: APP_SECRET,
        verifyToken: "bench-verify",
      },
    });
    // The model stand-in tells senders apart by the name in the prompt.
    let seq = 0;
    const post = async (kind: "audio" | "text") => {
      const from = String(5511_000_000_000 + ++seq);
      const part = kind === "audio"
        ? { mime_type: "audio/ogg; codecs=opus", sha256: AUDIO_SHA, id: from, voice: true }
        : { body: "Where is my order?" };
      const body = JSON.stringify({
        object: "whatsapp_business_account",
        entry: [{
          id: "1",
          changes: [{
            field: "messages",
            value: {
              messaging_product: "whatsapp",
              metadata: { display_phone_number: "1555", phone_number_id: PHONE_NUMBER_ID },
              contacts: [{ profile: { name: `sender:${from}` }, wa_id: from }],
              messages: [{ from, id: `wamid.${from}`, timestamp: "1763856000", type: kind, [kind]: part }],
            },
          }],
        }],
      });
      const signature = createHmac("sha256", APP_SECRET).update(body).digest("hex");
      const res = await app.fetch(
        new Request(`http://bench.local/webhooks/whatsapp/${channel.id}`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-hub-signature-256": `sha256=${signature}` },
          body,
        }),
      );
      await res.body?.cancel();
      posted.set(from, performance.now());
      return from;
    };
    const round = async (kind: "audio" | "text") => {
      const senders: string[] = [];
      const count = Math.round((RATE * DURATION_MS) / 1000);
      const start = performance.now();
      const sends: Promise<void>[] = [];
      for (let i = 0; i < count; i++) {
        const due = start + (i * 1000) / RATE;
        await new Promise((r) => setTimeout(r, Math.max(0, due - performance.now())));
        sends.push(post(kind).then((from) => void senders.push(from)));
      }
      await Promise.all(sends);
      const deadline = performance.now() + DRAIN_TIMEOUT_MS;
      while (senders.some((s) => !replied.has(s)) && performance.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
      }
      const audioEach = kind === "audio" ? (standinMs.get("audio") ?? 0) / senders.length : 0;
      standinMs.delete("audio");
      return senders.filter((s) => replied.has(s)).map((s) =>
        replied.get(s)! - posted.get(s)! - WINDOW_MS - (standinMs.get(s) ?? 0) - audioEach
      );
    };
    const media: number[] = [];
    const text: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      text.push(...await round("text"));
      media.push(...await round("audio"));
    }
    await app.stop();
    const row = (name: string, v: number[]) =>
      `| ${name} | ${v.length} | ${percentile(v, 50).toFixed(1)} | ${percentile(v, 95).toFixed(1)} | ${
        percentile(v, 99).toFixed(1)
      } |`;
    const ratio = percentile(media, 99) / percentile(text, 99);
    const report = [
      "# Voice note → reply (bench/media.ts)",
      "",
      `${
        new Date().toISOString()
      }: ${ROUNDS} rounds of ${DURATION_MS} ms at ${RATE} messages/s, window ${WINDOW_MS} ms.`,
      "Platform time per message (ms): the reply at the Graph stand-in − the post's 200 − the window − the stand-ins' own time.",
      "",
      "| messages | n | p50 | p95 | p99 |",
      "|---|---|---|---|---|",
      row("voice notes", media),
      row("texts (baseline, same run)", text),
      "",
      `p99 voice note / p99 text: ${ratio.toFixed(2)}x. Target: voice note p99 < 50 ms at 20 notes/s.`,
      "",
    ].join("\n");
    await Deno.writeTextFile("bench/results/media.md", report);
    console.log(report);
  } finally {
    await graph.shutdown();
    await model.shutdown();
    await pg.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) await runMediaBench();
