/**
 * What a crash costs the customer, part of `deno task bench`; alone: `deno task bench recovery`.
 * Server processes as `deno task start` runs them (bench/serve_app.ts, workers on) on a throwaway
 * PostgreSQL, grouping windows at BENCH_WINDOW_MS (1 ms), the claim lifetime left at its default,
 * and the model and Graph stand-ins in this process on 127.0.0.1 (bench/_reply_standins.ts). Each
 * round is a new customer whose WhatsApp message arrives as a signed Meta post; the model stand-in
 * holds the round's first call (the reply's) until the process that made it is gone, so the kill
 * lands while that reply's model call is in flight.
 *
 * - Restart: one process. When the held call arrives, kill -9 it and start a new one at once (which
 *   serves the next round, and is the one killed there). Measured: the restart (spawn) to the reply
 *   reaching the Graph stand-in, the kill to it, the new process' spawn to its "ready" line (for
 *   context: the floor of any restart), and when the model call was made again.
 * - Two processes: both running; kill -9 the one holding the reply's claim (its `ServerInstance`),
 *   and measure the kill to the survivor's reply. The dead one is replaced after the round, and the
 *   rounds' kills are spread over the survivor's CHECK_INTERVAL_MS (recovery.ts).
 *
 * In both, the customer's next message is posted as soon as the first reply arrives, and timed from
 * its post to its reply (it must not wait behind the crashed reply). Every text the Graph stand-in
 * gets is counted per customer: exactly one per customer message, checked once the database has
 * settled after the last round. Anything else, a reply later than 30 s after the restart (or the
 * kill, with two processes), or none within BENCH_RECOVERY_TIMEOUT_MS, is reported as a failure (and
 * the task exits 1). The timeout defaults above the 270 s claim lifetime, so a build without the
 * takeover is measured rather than cut off (the reply 270 s after the kill, once the claim expired).
 * BENCH_ROUNDS rounds of each (5). Writes bench/results/recovery.md. Not part of the tests.
 */
import pg from "pg";
import { ensureDatabase, freePort, startEmbeddedPostgres } from "../src/db/embedded.ts";
import { applyMigrations } from "../src/db/migrate.ts";
import { replyBenchEnv, seedWhatsAppChannel } from "./_seed.ts";
import { denoScript, spawnReady } from "./_spawn.ts";
import { metaMessageBody, postHeaders } from "./_meta.ts";
import { epochMs, ReplyStandins } from "./_reply_standins.ts";
import { median } from "./_percentiles.ts";
import { CHECK_INTERVAL_MS } from "../src/conversations/recovery.ts";

const ROUNDS = Number(Deno.env.get("BENCH_ROUNDS") ?? 5);
const WINDOW_MS = Number(Deno.env.get("BENCH_WINDOW_MS") ?? 1);
/** A crashed reply that has not reached the Graph stand-in this long after the kill is counted lost. */
const TIMEOUT_MS = Number(Deno.env.get("BENCH_RECOVERY_TIMEOUT_MS") ?? 300_000);
/** The platform's promise: a dead process' reply is taken over within 30 s. */
const GOAL_MS = 30_000;
/** The held model call must arrive, and an ordinary reply reach the Graph stand-in, within this. */
const STEP_TIMEOUT_MS = 30_000;
const RESULTS = "bench/results/recovery.md";
const APP_SECRET = "bench-app-secret";
const PHONE_NUMBER_ID = "106540352242944";

/** The model (answering at once) and the Graph sends, per message token. */
const standins = new ReplyStandins();
/** Every text the Graph stand-in got, per customer (`to`), in order. */
const textsTo = new Map<string, string[]>();

/** The model call to hold next (armed per round): its arrival is signalled, its answer never comes. */
let hold: ((at: number) => void) | undefined;
/** Held calls still open, released at the end (a killed process' call ends with its socket). */
const held = new Set<() => void>();

async function modelStandIn(req: Request): Promise<Response> {
  const arrived = hold;
  if (!arrived) return await standins.model(req);
  hold = undefined;
  arrived(epochMs());
  await new Promise<void>((resolve) => {
    held.add(resolve);
    req.signal.addEventListener("abort", () => resolve());
  });
  return new Response(null, { status: 503 });
}

async function graphStandIn(req: Request): Promise<Response> {
  const body = await req.clone().json();
  const to = String(body.to);
  textsTo.set(to, [...textsTo.get(to) ?? [], String(body.text?.body ?? "")]);
  return await standins.graphSend(req);
}

/** Arms the hold; resolves with the time the held call arrived. */
function holdNextModelCall(): Promise<number> {
  return within(new Promise<number>((resolve) => hold = resolve), STEP_TIMEOUT_MS, "the reply's model call");
}

/** `promise`, or an error naming `what` after `ms`. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => timer = setTimeout(() => reject(new Error(`no ${what}`)), ms)),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** A server process of the bench, with when it was spawned and when it printed "ready" (epoch ms). */
interface Server {
  child: Deno.ChildProcess;
  port: number;
  spawnedAt: number;
  readyAt: number;
}

/** One round's figures (ms; NaN where the reply never came). */
interface Round {
  /** The customer (wa_id) and the tokens of their two messages. */
  customer: string;
  tokens: [string, string];
  /** Restart variant: the new process' spawn to its "ready" line, and to the reply. */
  spawnToReady?: number;
  spawnToReply?: number;
  /** Two processes: whether the post went to the process that came to hold the claim. */
  postedToHolder?: boolean;
  killToModel: number;
  killToReply: number;
  /** The next message: its post to its reply. */
  nextToReply: number;
  /** Texts the customer got, per message (filled in at the end: each must be 1). */
  texts: [number, number];
}

export async function runRecoveryBench(): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "switchboard-bench-recovery-" });
  await Deno.chmod(dir, 0o755);
  const db = await startEmbeddedPostgres({ dir: `${dir}/data`, database: "postgres", persistent: false });
  const model = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, modelStandIn);
  const graph = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, graphStandIn);
  const live = new Set<Server>();
  let client: pg.Client | undefined;
  try {
    await ensureDatabase(db.adminUrl, "bench");
    const databaseUrl = db.adminUrl.replace(/\/postgres$/, "/bench");
    await applyMigrations(databaseUrl);
    client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    const env = replyBenchEnv(databaseUrl, {
      windowMs: WINDOW_MS,
      modelUrl: `http://127.0.0.1:${model.addr.port}/v1`,
      graphUrl: `http://127.0.0.1:${graph.addr.port}/v21.0`,
    });
    const channelId = await seedWhatsAppChannel(env, {
      email: "bench-recovery@example.test",
      phoneNumberId: PHONE_NUMBER_ID,
      appSecret: APP_SECRET,
    });

    const startServer = async (): Promise<Server> => {
      const port = freePort();
      const spawnedAt = epochMs();
      const { child } = await spawnReady(...denoScript("bench/serve_app.ts"), { ...env, PORT: String(port) });
      const server = { child, port, spawnedAt, readyAt: epochMs() };
      live.add(server);
      return server;
    };
    const kill = (server: Server) => {
      server.child.kill("SIGKILL");
      live.delete(server);
    };

    /** Posts message `i` of `customer` (token `token`) to `server`; when it was sent. */
    const post = async (server: Server, customer: string, token: string, i: number): Promise<number> => {
      const body = metaMessageBody({ phoneNumberId: PHONE_NUMBER_ID, from: customer, i, token });
      const sentAt = epochMs();
      const res = await fetch(`http://127.0.0.1:${server.port}/webhooks/whatsapp/${channelId}`, {
        method: "POST",
        body,
        headers: postHeaders(body, APP_SECRET),
      });
      await res.body?.cancel();
      if (res.status !== 200) throw new Error(`the post of ${token} got ${res.status}`);
      return sentAt;
    };
    const replied = async (token: string, timeoutMs: number) => {
      await standins.waitForGraph([token], timeoutMs);
      return standins.graphSeen.get(token) ?? NaN;
    };
    /** The next message of the round's customer, to `server`: its post to its reply. */
    const nextMessage = async (server: Server, customer: string, token: string) => {
      const sentAt = await post(server, customer, token, 2);
      return await replied(token, STEP_TIMEOUT_MS) - sentAt;
    };
    // Every round's customer is new: 55 11 9, the variant's digit, the round.
    const customerOf = (variant: number, round: number) => `55119${variant}${String(round).padStart(6, "0")}`;

    const restartRounds: Round[] = [];
    let server = await startServer();
    for (let round = 0; round < ROUNDS; round++) {
      const customer = customerOf(1, round);
      const tokens: [string, string] = [`restart${round}-a`, `restart${round}-b`];
      const arrived = holdNextModelCall();
      await post(server, customer, tokens[0], 1);
      await arrived;
      const killedAt = epochMs();
      const dead = server;
      kill(dead);
      // At once: the restart's spawn races the reply's takeover, as an operator's restart would.
      const [restarted, replyAt] = await Promise.all([startServer(), replied(tokens[0], TIMEOUT_MS)]);
      await dead.child.status;
      server = restarted;
      const r: Round = {
        customer,
        tokens,
        spawnToReady: restarted.readyAt - restarted.spawnedAt,
        spawnToReply: replyAt - restarted.spawnedAt,
        killToModel: (standins.modelSeen.get(tokens[0])?.in ?? NaN) - killedAt,
        killToReply: replyAt - killedAt,
        nextToReply: Number.isNaN(replyAt) ? NaN : await nextMessage(server, customer, tokens[1]),
        texts: [0, 0],
      };
      restartRounds.push(r);
      console.error(
        `${new Date().toISOString()} restart round ${round + 1}: spawn → ready ${ms(r.spawnToReady!)} ms, ` +
          `spawn → reply ${s(r.spawnToReply!)} s, kill → model call again ${s(r.killToModel)} s, ` +
          `kill → reply ${s(r.killToReply)} s, next message → reply ${ms(r.nextToReply)} ms`,
      );
    }

    // Two processes: the restart variant's last one and a second; the one holding the claim dies.
    const servers = [server, await startServer()];
    const twoRounds: Round[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const customer = customerOf(2, round);
      const tokens: [string, string] = [`two${round}-a`, `two${round}-b`];
      const postedTo = servers[round % 2];
      // The survivor (started at the end of the last round) looks for dead claims at its start and
      // then every CHECK_INTERVAL_MS: a kill at once would always fall just after a look and wait the
      // whole interval. The rounds' kills are spread over the interval instead, as a crash's would be.
      await new Promise((r) => setTimeout(r, round * CHECK_INTERVAL_MS / ROUNDS));
      const arrived = holdNextModelCall();
      await post(postedTo, customer, tokens[0], 1);
      await arrived;
      const pid = await claimHolder(client, customer);
      const dead = servers.find((one) => one.child.pid === pid);
      if (!dead) throw new Error(`the claim is held by pid ${pid}, not a server of this round`);
      const survivor = servers.find((one) => one !== dead)!;
      const killedAt = epochMs();
      kill(dead);
      const replyAt = await replied(tokens[0], TIMEOUT_MS);
      await dead.child.status;
      const r: Round = {
        customer,
        tokens,
        postedToHolder: postedTo === dead,
        killToModel: (standins.modelSeen.get(tokens[0])?.in ?? NaN) - killedAt,
        killToReply: replyAt - killedAt,
        nextToReply: Number.isNaN(replyAt) ? NaN : await nextMessage(survivor, customer, tokens[1]),
        texts: [0, 0],
      };
      twoRounds.push(r);
      console.error(
        `${new Date().toISOString()} two processes round ${round + 1}: ${
          r.postedToHolder ? "posted to the holder" : "posted to the other"
        }, kill → model call again ${s(r.killToModel)} s, kill → survivor's reply ${s(r.killToReply)} s, ` +
          `next message → reply ${ms(r.nextToReply)} ms`,
      );
      // Two processes again for the next round, started after this one's figures.
      servers[servers.indexOf(dead)] = await startServer();
    }

    // Late texts (a crashed reply sent twice) would come by now: every reply settled, then counted.
    const settled = await settle(client);
    const rounds = [...restartRounds, ...twoRounds];
    for (const r of rounds) {
      const refs = (textsTo.get(r.customer) ?? []).flatMap((text) =>
        [...text.matchAll(/ref ([\w-]+)/g)].map((m) => m[1])
      );
      r.texts = [0, 1].map((i) => refs.filter((t) => t === r.tokens[i]).length) as [number, number];
      // A text naming no token of the customer's messages is one too many as well.
      if (refs.length !== r.texts[0] + r.texts[1] || (textsTo.get(r.customer)?.length ?? 0) !== refs.length) {
        r.texts = [NaN, NaN];
      }
    }
    const failures = [
      ...rounds.filter((r) => Number.isNaN(r.killToReply)).map((r) => `${r.customer}: no reply`),
      ...rounds.filter((r) => (r.spawnToReply ?? r.killToReply) > GOAL_MS).map((r) =>
        `${r.customer}: replied ${s(r.spawnToReply ?? r.killToReply)} s after the ${
          r.spawnToReply === undefined ? "kill" : "restart"
        } (over ${GOAL_MS / 1000} s)`
      ),
      ...rounds.filter((r) => r.texts[0] !== 1 || r.texts[1] !== 1).map((r) =>
        `${r.customer}: texts ${JSON.stringify(textsTo.get(r.customer) ?? [])}`
      ),
      ...(settled ? [] : ["the database did not settle (a claim, a pending send or an unanswered message)"]),
    ];

    const md = report(restartRounds, twoRounds, failures, await Deno.readTextFile("/proc/loadavg"));
    await Deno.writeTextFile(RESULTS, md);
    console.log(md);
    if (failures.length) {
      console.error(`FAILED:\n${failures.join("\n")}`);
      Deno.exitCode = 1;
    }
  } finally {
    for (const release of held) release();
    for (const server of live) {
      server.child.kill("SIGTERM");
      await server.child.status;
    }
    await client?.end().catch(() => {});
    await model.shutdown();
    await graph.shutdown();
    await db.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/** The pid of the server process holding the reply claim of `customer`'s conversation. */
async function claimHolder(client: pg.Client, customer: string): Promise<number> {
  // The claim is committed before the model call is made; read once the call has arrived.
  const { rows } = await client.query<{ pid: number }>(
    `SELECT i.pid FROM "Conversation" c JOIN "ServerInstance" i ON i.id = c."replyClaimedBy"
       JOIN "Contact" ct ON ct.id = c."contactId"
      WHERE ct."externalId" = $1 AND c."replyClaimedAt" IS NOT NULL`,
    [customer],
  );
  if (!rows.length) throw new Error(`no reply claim on ${customer}'s conversation`);
  return rows[0].pid;
}

/**
 * Until no conversation is claimed, no message waits to be sent and every customer message is
 * answered (polled: the bench sees the database from outside), or STEP_TIMEOUT_MS; whether it settled.
 */
async function settle(client: pg.Client): Promise<boolean> {
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const { rows: [n] } = await client.query<{ open: number }>(
      `SELECT (SELECT count(*) FROM "Conversation" WHERE "replyClaimedAt" IS NOT NULL)
            + (SELECT count(*) FROM "Message" WHERE status = 'PENDING')
            + (SELECT count(*) FROM "Message" WHERE "senderKind" = 'CUSTOMER' AND "answeredAt" IS NULL)
            AS open`,
    );
    if (Number(n.open) === 0) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  return false;
}

const s = (x: number) => Number.isFinite(x) ? (x / 1000).toFixed(2) : "n/a";
const ms = (x: number) => Number.isFinite(x) ? x.toFixed(0) : "n/a";
const max = (xs: number[]) => xs.some(Number.isNaN) ? NaN : Math.max(...xs);
const texts = (r: Round) => r.texts.map((n) => Number.isNaN(n) ? "?" : String(n)).join(" + ");

function report(restart: Round[], two: Round[], failures: string[], load: string): string {
  const stat = (rounds: Round[], get: (r: Round) => number, f: (x: number) => string) => {
    const xs = rounds.map(get);
    return [f(median(xs)), f(max(xs))];
  };
  const restartRows = restart.map((r, i) =>
    `| ${i + 1} | ${ms(r.spawnToReady!)} | ${s(r.spawnToReply!)} | ${s(r.killToModel)} | ${
      s(r.killToReply)
    } | ${ms(r.nextToReply)} | ${texts(r)} |`
  );
  const restartStats = (["median", "max"] as const).map((label, k) =>
    `| ${label} | ${stat(restart, (r) => r.spawnToReady!, ms)[k]} | ${
      stat(restart, (r) => r.spawnToReply!, s)[k]
    } | ${stat(restart, (r) => r.killToModel, s)[k]} | ${stat(restart, (r) => r.killToReply, s)[k]} | ${
      stat(restart, (r) => r.nextToReply, ms)[k]
    } | |`
  );
  const twoRows = two.map((r, i) =>
    `| ${i + 1} | ${r.postedToHolder ? "the holder" : "the survivor"} | ${s(r.killToModel)} | ${
      s(r.killToReply)
    } | ${ms(r.nextToReply)} | ${texts(r)} |`
  );
  const twoStats = (["median", "max"] as const).map((label, k) =>
    `| ${label} | | ${stat(two, (r) => r.killToModel, s)[k]} | ${stat(two, (r) => r.killToReply, s)[k]} | ${
      stat(two, (r) => r.nextToReply, ms)[k]
    } | |`
  );
  const worst = (of: Round[], get: (r: Round) => number) => max(of.map(get));
  const rounds = `${ROUNDS} round${ROUNDS === 1 ? "" : "s"}`;
  const met = (x: number) => Number.isFinite(x) && x <= GOAL_MS ? "met" : "**not met**";
  const restartWorst = worst(restart, (r) => r.spawnToReply!);
  const twoWorst = worst(two, (r) => r.killToReply);
  return `# Recovery after a crash: kill -9 during a reply's model call

Measured ${new Date().toISOString()} by \`deno task bench recovery\` on ${navigator.hardwareConcurrency} cores
(load average at the end: ${load.split(" ").slice(0, 3).join(" ")}), Deno ${Deno.version.deno}.

Method: server processes as \`deno task start\` runs them (bench/serve_app.ts, workers on) on a throwaway
PostgreSQL, grouping windows ${WINDOW_MS} ms, \`REPLY_CLAIM_TTL_MS\` at its default; the model and Graph stand-ins
in the bench process on 127.0.0.1. Each round is a new customer whose WhatsApp text arrives as a signed Meta
post; the model stand-in holds the round's first call (the reply's), and when it arrives the process is
killed with SIGKILL. The customer's next message is posted as soon as the first reply reaches the Graph
stand-in, and timed from its post to its reply. Texts are counted per customer message at the Graph stand-in
once the database has settled after the last round (no claim, no pending send, every customer message
answered): each must be exactly 1. ${rounds} of each variant; times in s unless marked ms.

Restart: one process; killed, and a new one spawned at once, which serves the next round and is killed in it
(the old figure, before processes' claims were tied to their lives: the reply 240-263 s after the restart,
when the 270 s claim lifetime ran out).

| round | spawn → ready ms | restart (spawn) → reply | kill → model call again | kill → reply | next message → reply ms | texts (1st + 2nd message) |
|---|---|---|---|---|---|---|
${[...restartRows, ...restartStats].join("\n")}

Two processes: both running, the one holding the reply's claim (its \`ServerInstance\`) killed; the other
answers, and the dead one is replaced after the round. The post went to each in turn (the claim is usually
taken where the message was received). The survivor looks for dead claims every ${
    CHECK_INTERVAL_MS / 1000
  } s: round i
waits (i − 1)/${ROUNDS} of that after the survivor's start before its post, so the kills land across the interval
(at once, each would fall just after the survivor's first look and wait the whole interval).

| round | post went to | kill → model call again | kill → survivor's reply | next message → reply ms | texts (1st + 2nd message) |
|---|---|---|---|---|---|
${[...twoRows, ...twoStats].join("\n")}

| figure (worst round) | value | goal |
|---|---|---|
| restart → reply | ${s(restartWorst)} s | ≤ ${GOAL_MS / 1000} s, ${met(restartWorst)} |
| kill → survivor's reply, two processes | ${s(twoWorst)} s | ≤ ${GOAL_MS / 1000} s, ${met(twoWorst)} |
| next message → reply | ${
    ms(worst([...restart, ...two], (r) => r.nextToReply))
  } ms | not behind the crashed reply |
| texts per customer message | ${
    [...restart, ...two].every((r) => r.texts[0] === 1 && r.texts[1] === 1)
      ? "exactly 1 each"
      : "**not 1 each**"
  } | exactly 1 |

${
    failures.length
      ? `Failures:\n\n${failures.map((f) => `- ${f}`).join("\n")}`
      : "No failures: every reply came in time, once."
  }
`;
}

if (import.meta.main) await runRecoveryBench();
