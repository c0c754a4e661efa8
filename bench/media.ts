/**
 * The voice note → reply benchmark, part of `deno task bench`; alone: `deno task bench media`. As
 * bench/inbound.ts: one server process (bench/serve_app.ts, as `deno task start` runs it, workers
 * on) on its own throwaway PostgreSQL, grouping windows at BENCH_WINDOW_MS (1 ms), and signed
 * Meta-shaped posts sent open-loop from a separate process (bench/load_rate.ts) at BENCH_RATE
 * (20/s), each from a NEW sender (a new conversation, one reply), for BENCH_ROUNDS rounds of
 * BENCH_DURATION_MS. Stand-ins on 127.0.0.1 in this process, each timing itself per message token:
 * the Graph API (media description, the file: a small Ogg-like payload with its sha256, and the
 * sends), the transcription endpoint (OpenAI-compatible multipart; answers at once, or after
 * BENCH_TRANSCRIBE_MS) and the model (at once, or after BENCH_MODEL_MS). The token rides in the
 * media id, the file, the transcript and the model's answer, so every stand-in's call is tied to
 * its note.
 *
 * Per voice note, the platform's own time = the reply's arrival at the Graph stand-in − the 200 of
 * the post − the window − the stand-ins' own time (description + file + transcription + model, as
 * each saw it). Each round of voice notes is paired with a round of text messages at the same rate
 * (the baseline: the same definition without the media work; the order alternates), and the report
 * gives the ratio voice/text of the platform p50 and p99 per round, since the machine is shared
 * and noisy. Also the 200's p50/p99, conversations/s, lost notes, SQL statements per note
 * (pg_stat_statements), CPU ms per note of the server, of PostgreSQL and of the stand-ins, pg-boss'
 * wait and run of each queue, and the gaps between the stand-ins' calls (where the time goes).
 * BENCH_STATEMENTS=1 prints the statements of each round, BENCH_PG_LOG=<file> PostgreSQL's log.
 * Writes bench/results/media.md. Not part of the tests.
 */
import { ensureDatabase, freePort } from "../src/db/embedded.ts";
import { applyMigrations } from "../src/db/migrate.ts";
import { cpuTimeMs } from "./_cpu.ts";
import { replyBenchEnv, seedWhatsAppChannel } from "./_seed.ts";
import type pg_ from "pg";
import { denoScript, spawnReady } from "./_spawn.ts";
import { type LoadOut, postOpenLoop } from "./_poster.ts";
import { epochMs, ReplyStandins, type Seen, tokensIn } from "./_reply_standins.ts";
import { type MessageKind, sha256Hex, tokenOfMediaId, VOICE_MIME_TYPE, voiceNoteBytes } from "./_meta.ts";
import {
  type Hop,
  hopTimings,
  openStats,
  postgresCpuMs,
  printStatements,
  resetStatements,
  startStatsPostgres,
  statementCount,
  statementsRun,
} from "./_pg_stats.ts";
import { median, pct } from "./_percentiles.ts";
import { collectGarbage } from "./_gc.ts";

const ROUNDS = Number(Deno.env.get("BENCH_ROUNDS") ?? 5);
const DURATION_MS = Number(Deno.env.get("BENCH_DURATION_MS") ?? 5000);
const RATE = Number(Deno.env.get("BENCH_RATE") ?? 20);
const WINDOW_MS = Number(Deno.env.get("BENCH_WINDOW_MS") ?? 1);
/** The transcription stand-in's answer waits this long (0: at once); its time is subtracted as its own. */
const TRANSCRIBE_MS = Number(Deno.env.get("BENCH_TRANSCRIBE_MS") ?? 0);
/** The model stand-in's answer waits this long (0: at once); its time is subtracted as its own. */
const MODEL_MS = Number(Deno.env.get("BENCH_MODEL_MS") ?? 0);
/** A note whose reply has not reached the Graph stand-in this long after the round is counted lost. */
const DRAIN_TIMEOUT_MS = 30_000;
const RESULTS = "bench/results/media.md";
const APP_SECRET = "bench-app-secret";
const PHONE_NUMBER_ID = "106540352242933";
const GOAL_P99_MS = 50;

/** The model and the Graph sends, per message token. */
const standins = new ReplyStandins(MODEL_MS);
/** The media calls, per note token, as the stand-ins saw them. */
const mediaSeen = new Map<string, { described?: Seen; file?: Seen; transcribed?: Seen }>();
const seenOf = (token: string) => mediaSeen.get(token) ?? mediaSeen.set(token, {}).get(token)!;

/** The file of each note, by token (made once, as the poster made its sha256). */
const files = new Map<string, { bytes: Uint8Array<ArrayBuffer>; sha256: string }>();
function fileOf(token: string) {
  let file = files.get(token);
  if (!file) {
    const bytes = voiceNoteBytes(token);
    file = { bytes, sha256: sha256Hex(bytes) };
    files.set(token, file);
  }
  return file;
}

let graphBase = "";

/**
 * The Graph API: `GET /v21.0/<media id>` describes the note's file, `GET /files/<token>` gives it,
 * `POST /v21.0/<phone id>/messages` is a reply (ReplyStandins). Each media call records its own time.
 */
async function graphStandIn(req: Request): Promise<Response> {
  if (req.method === "POST") return await standins.graphSend(req);
  const t0 = epochMs();
  const path = new URL(req.url).pathname;
  const fileToken = path.startsWith("/files/") ? decodeURIComponent(path.slice(7)) : null;
  if (fileToken !== null) {
    const answer = new Response(fileOf(fileToken).bytes, { headers: { "content-type": "audio/ogg" } });
    seenOf(fileToken).file = { in: t0, out: epochMs() };
    return answer;
  }
  const mediaId = decodeURIComponent(path.split("/").at(-1) ?? "");
  const token = tokenOfMediaId(mediaId);
  if (token === null) {
    return Response.json({ error: { message: "unknown media", code: 100 } }, { status: 400 });
  }
  const file = fileOf(token);
  const answer = Response.json({
    url: `${graphBase}/files/${encodeURIComponent(token)}`,
    mime_type: VOICE_MIME_TYPE,
    sha256: file.sha256,
    file_size: file.bytes.length,
    id: mediaId,
    messaging_product: "whatsapp",
  });
  seenOf(token).described = { in: t0, out: epochMs() };
  return answer;
}

/**
 * OpenAI-compatible: `POST /v1/audio/transcriptions` (multipart) answers the note's token said back
 * (`tok:<token>: ...`, read from the file), at once or after TRANSCRIBE_MS; the rest is the model.
 */
async function aiStandIn(req: Request): Promise<Response> {
  if (!new URL(req.url).pathname.endsWith("/audio/transcriptions")) return await standins.model(req);
  const t0 = epochMs();
  const form = await req.formData();
  const file = form.get("file");
  const said = file instanceof File ? new TextDecoder().decode(await file.arrayBuffer()) : "";
  const token = tokensIn(said)[0];
  if (TRANSCRIBE_MS > 0) await new Promise((r) => setTimeout(r, TRANSCRIBE_MS));
  const answer = Response.json({ text: token ? `tok:${token}: where is my order?` : "where is my order?" });
  if (token) seenOf(token).transcribed = { in: t0, out: epochMs() };
  return answer;
}

/** The jobs of one conversation: store the post, understand the note, reply, send. */
const HOP_QUEUES = ["whatsapp-inbound", "message-media", "conversation-reply", "message-send"];

/** The gaps between what the stand-ins saw of one message, in order (the platform's own steps). */
const GAPS: Record<MessageKind, string[]> = {
  voice: [
    "200 → description",
    "description → file",
    "file → transcription",
    "transcription → model",
    "model → send",
  ],
  text: ["200 → model", "model → send"],
};

interface Run {
  kind: MessageKind;
  posts: number;
  inboundP50: number;
  inboundP99: number;
  /** Messages whose reply never reached the Graph stand-in. */
  lost: number;
  /** Notes whose media work ended with an error (stored as media.error). */
  mediaErrors: number;
  platformP50: number;
  platformP99: number;
  platformMax: number;
  /** The stand-ins' own time per message, p50. */
  standinP50: number;
  /** Replies per second from the first post to the last reply. */
  conversationsPerSecond: number;
  /** SQL statements PostgreSQL ran per message (pg_stat_statements, BEGIN/COMMIT included). */
  statements: number;
  hops: Record<string, Hop>;
  /** Per gap of GAPS[kind]: p50 / p99 ms. */
  gaps: Record<string, [number, number]>;
  serverCpuMs: number;
  postgresCpuMs: number;
  /** This process' (the stand-ins'), per message. */
  standinCpuMs: number;
}

const span = (s: Seen | undefined) => s ? s.out - s.in : NaN;

/**
 * BENCH_CPU_PROFILE=<prefix>: the server's V8 CPU profile of each run is written to
 * <prefix>.<run>.cpuprofile (bench/serve_app.ts writes the profile since the previous one on SIGUSR2).
 */
const profileTo = Deno.env.get("BENCH_CPU_PROFILE");

async function takeProfile(server: Deno.ChildProcess, to: string | null): Promise<void> {
  await Deno.remove(profileTo!).catch(() => {});
  server.kill("SIGUSR2");
  for (let i = 0; i < 100 && !(await Deno.stat(profileTo!).catch(() => null)); i++) {
    await new Promise((r) => setTimeout(r, 50));
  }
  if (to) await Deno.rename(profileTo!, to).catch(() => {});
}

const startScript = (script: string, env: Record<string, string>) => spawnReady(...denoScript(script), env);

export async function runMediaBench(): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "switchboard-bench-media-" });
  await Deno.chmod(dir, 0o755);
  const dataDir = `${dir}/data`;
  const pg = await startStatsPostgres(dataDir, Deno.env.get("BENCH_PG_LOG"));
  const children: Deno.ChildProcess[] = [];
  let statsClient: pg_.Client | undefined;
  const ai = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, aiStandIn);
  const graph = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, graphStandIn);
  graphBase = `http://127.0.0.1:${graph.addr.port}`;
  try {
    await ensureDatabase(pg.adminUrl, "bench");
    const databaseUrl = pg.adminUrl.replace(/\/postgres$/, "/bench");
    await applyMigrations(databaseUrl);
    const stats = await openStats(databaseUrl);
    statsClient = stats;
    const env = replyBenchEnv(databaseUrl, {
      windowMs: WINDOW_MS,
      modelUrl: `http://127.0.0.1:${ai.addr.port}/v1`,
      graphUrl: `${graphBase}/v21.0`,
    });
    const channelId = await seedWhatsAppChannel(env, {
      email: "bench-media@example.test",
      phoneNumberId: PHONE_NUMBER_ID,
      appSecret: APP_SECRET,
    });
    const port = freePort();
    const { child: server } = await startScript("bench/serve_app.ts", {
      ...env,
      PORT: String(port),
      ...(profileTo ? { BENCH_CPU_PROFILE: profileTo } : {}),
    });
    children.push(server);
    const inboundUrl = `http://127.0.0.1:${port}/webhooks/whatsapp/${channelId}`;

    // Every run's senders are new: 55 + a 4-digit block of its own + the message's index.
    let block = 1000;
    const runOf = async (kind: MessageKind, run: string): Promise<Run> => {
      // The server's CPU profile since the previous run is dropped: this run's is written after it.
      if (profileTo) await takeProfile(server, null);
      collectGarbage();
      const since = await resetStatements(stats);
      const cpu0 = { server: cpuTimeMs(server.pid), pg: postgresCpuMs(dataDir), here: cpuTimeMs(Deno.pid) };
      const r: LoadOut = await postOpenLoop({
        url: inboundUrl,
        rate: RATE,
        durationMs: DURATION_MS,
        run,
        inbound: { appSecret: APP_SECRET, phoneNumberId: PHONE_NUMBER_ID },
        kind,
        senders: String(block++),
      });
      const tokens = Object.keys(r.accepted);
      await standins.waitForGraph(tokens, DRAIN_TIMEOUT_MS);
      const cpu1 = { server: cpuTimeMs(server.pid), pg: postgresCpuMs(dataDir), here: cpuTimeMs(Deno.pid) };
      if (profileTo) await takeProfile(server, `${profileTo}.${run}.cpuprofile`);
      const top = await statementsRun(stats);
      const hops = await hopTimings(stats, since, HOP_QUEUES);
      printStatements(top, tokens.length, "msg");
      const { rows: [{ errors }] } = await stats.query<{ errors: number }>(
        `SELECT count(*)::int AS errors FROM "Message" WHERE "createdAt" >= $1 AND "mediaError" IS NOT NULL`,
        [since],
      );
      const platform: number[] = [];
      const standin: number[] = [];
      const gaps = GAPS[kind].map(() => [] as number[]);
      let lastGraph = 0;
      for (const t of tokens) {
        const at = standins.graphSeen.get(t);
        if (at === undefined) continue;
        const model = standins.modelSeen.get(t);
        const media = mediaSeen.get(t) ?? {};
        // A stand-in that never saw the message took no time of its own.
        const own = (model ? span(model) : 0) +
          (kind === "voice"
            ? [media.described, media.file, media.transcribed].reduce((ms, s) => ms + (s ? span(s) : 0), 0)
            : 0);
        platform.push(at - r.accepted[t] - WINDOW_MS - own);
        standin.push(own);
        lastGraph = Math.max(lastGraph, at);
        const points = kind === "voice"
          ? [r.accepted[t], media.described, media.file, media.transcribed, model, at]
          : [r.accepted[t], model, at];
        for (let g = 0; g < gaps.length; g++) {
          const from = points[g], to = points[g + 1];
          const end = typeof from === "number" ? from : from?.out;
          const start = typeof to === "number" ? to : to?.in;
          if (end !== undefined && start !== undefined) gaps[g].push(start - end);
        }
      }
      return {
        kind,
        posts: tokens.length,
        inboundP50: r.p50,
        inboundP99: r.p99,
        lost: tokens.length - platform.length,
        mediaErrors: errors,
        platformP50: pct(platform, 0.5),
        platformP99: pct(platform, 0.99),
        platformMax: pct(platform, 1),
        standinP50: pct(standin, 0.5),
        conversationsPerSecond: platform.length / ((lastGraph - r.firstSentAt) / 1000),
        statements: statementCount(top) / tokens.length,
        hops,
        gaps: Object.fromEntries(
          GAPS[kind].map((name, g) => [name, [pct(gaps[g], 0.5), pct(gaps[g], 0.99)]]),
        ),
        serverCpuMs: (cpu1.server - cpu0.server) / tokens.length,
        postgresCpuMs: (cpu1.pg - cpu0.pg) / tokens.length,
        standinCpuMs: (cpu1.here - cpu0.here) / tokens.length,
      };
    };

    const ms = (x: number | null | undefined, d = 0) => x === null || x === undefined ? "-" : x.toFixed(d);
    const log = (label: string, r: Run) =>
      console.error(
        `${new Date().toISOString()} ${label} ${r.kind} @${RATE}/s: inbound p50 ${
          r.inboundP50.toFixed(1)
        } p99 ${r.inboundP99.toFixed(1)} ms; platform p50 ${r.platformP50.toFixed(1)} p99 ${
          r.platformP99.toFixed(1)
        } max ${r.platformMax.toFixed(1)} ms (stand-ins ${r.standinP50.toFixed(1)} ms); ${
          r.conversationsPerSecond.toFixed(1)
        } conv/s; lost ${r.lost}; ` +
          `media errors ${r.mediaErrors}; ${r.statements.toFixed(1)} statements/msg; cpu/msg server ${
            r.serverCpuMs.toFixed(1)
          } ms, pg ${r.postgresCpuMs.toFixed(1)} ms, stand-ins ${r.standinCpuMs.toFixed(1)} ms; ` +
          Object.entries(r.gaps).map(([g, [p50, p99]]) => `${g} ${ms(p50, 1)}/${ms(p99, 1)}`).join(", ") +
          "; " +
          HOP_QUEUES.filter((q) => r.hops[q]).map((q) => {
            const h = r.hops[q];
            return `${q} ×${(h.count / r.posts).toFixed(2)} here ${(h.here * 100).toFixed(0)}% wait ${
              ms(h.waitP50)
            }/${ms(h.waitP99)} run ${ms(h.runP50)}/${ms(h.runP99)}`;
          }).join(", "),
      );

    // Warm-up (JIT, prepared statements, pools, both paths): not counted.
    log("warm-up", await runOf("text", "warmt"));
    log("warm-up", await runOf("voice", "warmv"));

    const rounds: Array<{ voice: Run; text: Run }> = [];
    for (let round = 0; round < ROUNDS; round++) {
      // The order alternates, so neither kind always follows the other's leftovers.
      const order: MessageKind[] = round % 2 ? ["voice", "text"] : ["text", "voice"];
      const pair: Partial<Record<MessageKind, Run>> = {};
      for (const kind of order) {
        const r = await runOf(kind, `${kind[0]}${round}`);
        pair[kind] = r;
        log(`round ${round + 1}`, r);
      }
      rounds.push(pair as { voice: Run; text: Run });
    }

    const f = (x: number | null | undefined, d = 1) =>
      x !== null && x !== undefined && Number.isFinite(x) ? x.toFixed(d) : "n/a";
    const ratio = (a: number, b: number) => a / b;
    const p50Ratios = rounds.map((p) => ratio(p.voice.platformP50, p.text.platformP50));
    const p99Ratios = rounds.map((p) => ratio(p.voice.platformP99, p.text.platformP99));
    const row = (i: number, r: Run) =>
      `| ${i + 1} | ${r.kind === "voice" ? "voice notes" : "text"} | ${f(r.inboundP50, 2)} / ${
        f(r.inboundP99, 2)
      } | ${f(r.platformP50)} / ${f(r.platformP99)} / ${f(r.platformMax)} | ${f(r.standinP50)} | ${
        f(r.conversationsPerSecond)
      } | ${r.lost} | ${f(r.statements)} | ${f(r.serverCpuMs)} / ${f(r.postgresCpuMs)} / ${
        f(r.standinCpuMs)
      } |`;
    const roundRows = rounds.flatMap((p, i) => [row(i, p.voice), row(i, p.text)]).join("\n");
    const ratioRows = rounds.map((_, i) => `| ${i + 1} | ${f(p50Ratios[i], 2)}x | ${f(p99Ratios[i], 2)}x |`)
      .join(
        "\n",
      );
    const medOf = (kind: MessageKind, get: (r: Run) => number) => median(rounds.map((p) => get(p[kind])));
    const hopRow = (q: string) => {
      const cell = (kind: MessageKind) => {
        if (!rounds.some((p) => p[kind].hops[q])) return "- | - | -";
        const m = (k: keyof Hop) => medOf(kind, (r) => (r.hops[q]?.[k] as number | null) ?? NaN);
        return `${f(medOf(kind, (r) => (r.hops[q]?.count ?? 0) / r.posts), 2)} / ${
          f(m("here") * 100, 0)
        } % | ${f(m("waitP50"))} / ${f(m("waitP99"))} | ${f(m("runP50"))} / ${f(m("runP99"))}`;
      };
      return `| ${q} | ${cell("voice")} | ${cell("text")} |`;
    };
    const gapRows = (kind: MessageKind) =>
      GAPS[kind].map((g) =>
        `| ${kind === "voice" ? "voice note" : "text"} | ${g} | ${f(medOf(kind, (r) => r.gaps[g][0]))} / ${
          f(medOf(kind, (r) => r.gaps[g][1]))
        } |`
      ).join("\n");
    const voiceP99 = medOf("voice", (r) => r.platformP99);
    const load = await Deno.readTextFile("/proc/loadavg").catch(() => "?");
    const md = `# Voice note → reply: signed WhatsApp voice notes to the Graph call

Measured ${new Date().toISOString()} by \`deno task bench media\` on ${navigator.hardwareConcurrency} cores
(load average at the end: ${load.split(" ").slice(0, 3).join(" ")}), Deno ${Deno.version.deno}.

Method: one server process (bench/serve_app.ts, as \`deno task start\` runs it, workers on) on its own
PostgreSQL, grouping windows ${WINDOW_MS} ms; signed Meta-shaped posts sent open-loop from a separate process,
each from a new sender (a new conversation, one reply). Stand-ins in the bench process on 127.0.0.1, each
timing itself per message: the Graph API (the media's description, its file: ${
      fileOf("x").bytes.length
    } bytes of Ogg-like audio with
its sha256, and the sends), the transcription endpoint (OpenAI-compatible multipart, answering ${
      TRANSCRIBE_MS ? `after ${TRANSCRIBE_MS} ms` : "at once"
    }) and
the model (answering ${
      MODEL_MS ? `after ${MODEL_MS} ms` : "at once"
    }). A token rides in the media id, the file, the transcript and the model's answer,
so each call is tied to its note. Platform time = Graph send received − inbound 200 received − window − the
stand-ins' own time (description + file + transcription + model). ${ROUNDS} rounds; each pairs ${
      DURATION_MS / 1000
    } s of voice notes
(audio, voice, \`${VOICE_MIME_TYPE}\`) at ${RATE}/s with ${
      DURATION_MS / 1000
    } s of text messages at ${RATE}/s (the baseline: the same
definition, without the media work; the order alternates). The ratios of the same round are what count: the
machine is shared. SQL statements and CPU are all the round's: the reply jobs that a voice note's window queues
for when MEDIA_WAIT_MS runs out (no-ops by then) run 30 s later, in a later round.

| round | messages | inbound 200 p50 / p99 ms | platform p50 / p99 / max ms | stand-ins' own p50 ms | conv/s | lost | SQL statements / msg | CPU ms per msg: server / PostgreSQL / stand-ins |
|---|---|---|---|---|---|---|---|---|
${roundRows}

Voice note / text, platform time of the same round:

| round | p50 | p99 |
|---|---|---|
${ratioRows}

Where the time goes. Between the stand-ins' calls (median over the rounds of each round's p50 / p99, ms; the
first gap can be negative, the job starting before the 200 reached the poster):

| messages | gap | p50 / p99 ms |
|---|---|---|
${gapRows("voice")}
${gapRows("text")}

pg-boss' jobs (database clock; median over the rounds): jobs per message / share run by the process that
enqueued them, the fetched ones' wait for a worker (due → fetched), the run (fetched → completed, or enqueued
→ completed for a job run where it was enqueued):

| job | voice: jobs/msg, here | wait p50 / p99 | run p50 / p99 | text: jobs/msg, here | wait p50 / p99 | run p50 / p99 |
|---|---|---|---|---|---|---|
${HOP_QUEUES.map(hopRow).join("\n")}

| figure (median of the rounds) | value | goal |
|---|---|---|
| voice note platform p50 / p99 at ${RATE}/s | ${f(medOf("voice", (r) => r.platformP50))} / ${
      f(voiceP99)
    } ms | p99 < ${GOAL_P99_MS} ms |
| text platform p50 / p99 at ${RATE}/s (same run) | ${f(medOf("text", (r) => r.platformP50))} / ${
      f(medOf("text", (r) => r.platformP99))
    } ms | |
| voice / text, p50 and p99 (median of the rounds' ratios) | ${f(median(p50Ratios), 2)}x / ${
      f(median(p99Ratios), 2)
    }x | |
| notes lost, notes with a media error | ${rounds.reduce((n, p) => n + p.voice.lost, 0)}, ${
      rounds.reduce((n, p) => n + p.voice.mediaErrors, 0)
    } | 0 |
| SQL statements per voice note / per text | ${f(medOf("voice", (r) => r.statements))} / ${
      f(medOf("text", (r) => r.statements))
    } | |
`;
    await Deno.writeTextFile(RESULTS, md);
    console.log(md);
  } finally {
    for (const child of children) {
      child.kill("SIGTERM");
      await child.status;
    }
    await statsClient?.end().catch(() => {});
    await ai.shutdown();
    await graph.shutdown();
    await pg.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) await runMediaBench();
