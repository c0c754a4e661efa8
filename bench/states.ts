/**
 * What pushing outbound message states live costs, part of `deno task bench`; alone:
 * `deno task bench states`. A status change of an outbound message (PENDING -> SENT, ...) is
 * announced by a trigger (migration `message_live_updates`) that looks the conversation up and
 * NOTIFYs in the changing transaction. Measured on the migrated schema, with a LISTEN connection
 * draining the channel as a server's hub does: BENCH_MESSAGES single-row status updates, each its own
 * transaction (as a send's outcome or a status webhook writes it), with the trigger and with it
 * disabled, alternating which goes first, BENCH_ROUNDS rounds; and, server side, the trigger's own
 * time per call from EXPLAIN ANALYZE of one update of every message. Writes bench/results/states.md;
 * its last line is `states: <ratio>x a status change's transaction, <us> us a trigger call`.
 */
import pg from "pg";
import { startEmbeddedPostgres } from "../src/db/embedded.ts";
import { applyMigrations } from "../src/db/migrate.ts";
import { median } from "./_percentiles.ts";

const MESSAGES = Number(Deno.env.get("BENCH_MESSAGES") ?? 2000);
const ROUNDS = Number(Deno.env.get("BENCH_ROUNDS") ?? 7);
const RESULTS = "bench/results/states.md";
const TRIGGER = "Message_live_updated";

export async function runStatesBench(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "switchboard-bench-states-" });
  await Deno.chmod(dir, 0o755);
  const db = await startEmbeddedPostgres({ dir: `${dir}/data`, database: "states", persistent: false });
  const c = new pg.Client({ connectionString: db.url });
  const listener = new pg.Client({ connectionString: db.url });
  try {
    await applyMigrations(db.url);
    await c.connect();
    await listener.connect();
    let heard = 0;
    listener.on("notification", () => heard++);
    await listener.query("LISTEN switchboard_live");
    await c.query(`INSERT INTO "Workspace"(id, name) VALUES ('w', 'W')`);
    await c.query(`INSERT INTO "Agent"(id, "workspaceId", name, model, "systemPrompt", "updatedAt")
      VALUES ('a', 'w', 'A', 'm', 'p', now())`);
    await c.query(
      `INSERT INTO "Channel"(id, "workspaceId", "agentId", label, type) VALUES ('ch', 'w', 'a', 'L', 'API')`,
    );
    await c.query(
      `INSERT INTO "Contact"(id, "workspaceId", "externalId", name) VALUES ('ct', 'w', 'x', 'X')`,
    );
    await c.query(
      `INSERT INTO "Conversation"(id, "workspaceId", "agentId", "channelId", "contactId", "updatedAt")
      VALUES ('c', 'w', 'a', 'ch', 'ct', now())`,
    );
    await c.query(
      `INSERT INTO "Message"(id, "conversationId", "channelId", direction, "senderKind", content, status)
      SELECT 'm' || g, 'c', 'ch', 'OUTBOUND', 'AI', 'x', 'PENDING' FROM generate_series(1, ${MESSAGES}) g`,
    );
    const ids = Array.from({ length: MESSAGES }, (_, i) => `m${i + 1}`);
    const trigger = (on: boolean) =>
      c.query(`ALTER TABLE "Message" ${on ? "ENABLE" : "DISABLE"} TRIGGER "${TRIGGER}"`);
    /** Every message PENDING again, announcing nothing. */
    const reset = async () => {
      await trigger(false);
      await c.query(`UPDATE "Message" SET status = 'PENDING'`);
      await c.query(`VACUUM "Message"`);
    };
    /** ms per status change, each its own transaction. */
    const oneByOne = async (on: boolean) => {
      await reset();
      await trigger(on);
      const t0 = performance.now();
      for (const id of ids) await c.query(`UPDATE "Message" SET status = 'SENT' WHERE id = $1`, [id]);
      return (performance.now() - t0) / MESSAGES;
    };
    const rounds: Array<{ on: number; off: number }> = [];
    for (let r = 0; r < ROUNDS; r++) {
      const ms: Record<string, number> = {};
      for (const on of r % 2 === 0 ? [true, false] : [false, true]) {
        ms[on ? "on" : "off"] = await oneByOne(on);
      }
      rounds.push({ on: ms.on, off: ms.off });
      console.log(`round ${r + 1}: ${ms.on.toFixed(3)} ms with the trigger, ${ms.off.toFixed(3)} without`);
    }
    const calls: number[] = [];
    for (let r = 0; r < 3; r++) {
      await reset();
      await trigger(true);
      const { rows } = await c.query(`EXPLAIN (ANALYZE, FORMAT JSON) UPDATE "Message" SET status = 'SENT'`);
      const t = rows[0]["QUERY PLAN"][0].Triggers.find((t: { "Trigger Name": string }) =>
        t["Trigger Name"] === TRIGGER
      );
      calls.push((t.Time / t.Calls) * 1000);
    }
    // Every change announced once: the rounds' and the EXPLAINs'.
    const expected = MESSAGES * (ROUNDS + 3);
    // The last ones are still on their way to the LISTEN connection.
    for (const until = performance.now() + 10_000; heard < expected && performance.now() < until;) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const ratio = median(rounds.map((r) => r.on / r.off));
    const perCall = median(calls);
    const last = `states: ${ratio.toFixed(2)}x a status change's transaction, ${
      perCall.toFixed(1)
    } us a trigger call`;
    const load = Deno.loadavg().map((n) => n.toFixed(1)).join(" ");
    const md = `# Message states pushed live

Measured ${new Date().toISOString()} by \`deno task bench states\` (bench/states.ts) on
${navigator.hardwareConcurrency} cores, load average ${load} at the end. ${MESSAGES} outbound messages
of one conversation go PENDING -> SENT one statement and transaction each, with the trigger that
announces the change (migration \`message_live_updates\`) and with it disabled, alternating which runs
first; a LISTEN connection drains the notifications (${heard} heard, ${expected} expected).

| round | ms a change, trigger | ms a change, none | ratio |
|---|---|---|---|
${
      rounds.map((r, i) =>
        `| ${i + 1} | ${r.on.toFixed(3)} | ${r.off.toFixed(3)} | ${(r.on / r.off).toFixed(2)} |`
      ).join("\n")
    }

Median ratio ${ratio.toFixed(2)}x (${
      (median(rounds.map((r) => r.on - r.off)) * 1000).toFixed(0)
    } us more a change).
The trigger's own time (EXPLAIN ANALYZE of one UPDATE of every message, 3 runs): ${
      calls.map((n) => n.toFixed(1)).join(", ")
    } us a call.

${last}
`;
    await Deno.writeTextFile(RESULTS, md);
    console.log(md);
    if (heard < expected) throw new Error(`${heard} notifications heard, ${expected} expected`);
    return last;
  } finally {
    await listener.end().catch(() => {});
    await c.end().catch(() => {});
    await db.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}
