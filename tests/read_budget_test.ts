/**
 * What one read may cost: an answer over the byte budget is refused (PostgreSQL stops building it
 * once past the budget, the driver never receives it), and an exception inside the driver fails
 * one request and not the process. Reads whose client has gone: tests/client_disconnect_test.ts.
 */
import assert from "node:assert/strict";
import pg from "pg";
import { Client, Seed, startTestApp, testConfig } from "./_helpers/app.ts";
import { createTestDatabase } from "./_helpers/db.ts";
import { createPrisma, POOL_IDLE_MS } from "../src/db/client.ts";
import { createPool } from "../src/db/pool.ts";
import { buildApp } from "../src/app.ts";
import { silentLogger } from "../src/shared/logger.ts";

const BIG = "\u0001".repeat(100_000);

/** 15 agents whose training context (and so prompt) is 100 000 × U+0001: 6 bytes each in JSON. */
async function bigAgents(owner: Client): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < 15; i++) {
    const res = await owner.post("/api/agents", { name: `Big ${i}`, trainingContext: BIG });
    assert.equal(res.status, 201);
    ids.push(res.body.id);
  }
  return ids;
}

const BOMB = `{ ${
  Array.from({ length: 30 }, (_, i) =>
    `a${i}: agents(first: 100) { edges { node { id systemPrompt trainingContext } } }`)
    .join(" ")
} }`;

Deno.test("a member's 30-alias read of 15 huge agents is refused as too large, and the app answers after", async () => {
  const t = await startTestApp();
  try {
    const { workspaceId, owner } = await t.seed.workspace();
    // Stored text is bounded: one character past 100 000 is refused and nothing is stored.
    const over = await owner.client.post("/api/agents", { name: "Over", trainingContext: BIG + "x" });
    assert.equal(over.status, 400);
    assert.equal(over.body.code, "VALIDATION_FAILED");
    await bigAgents(owner.client);
    assert.equal(await t.app.deps.db.agent.count(), 15);
    const viewer = await t.seed.member(workspaceId, "VIEWER");

    const res = await viewer.client.graphql(BOMB);
    assert.equal(res.status, 400);
    assert.equal(res.body.data, null);
    assert.equal(res.body.errors.length, 1);
    assert.equal(res.body.errors[0].extensions.code, "RESPONSE_TOO_LARGE");
    assert.deepEqual(res.body.errors[0].path, ["a0"]);
    assert.match(res.body.errors[0].message, /at most 33554432 per request/);

    // The same rows within the budget: one alias (about 18 MB) through the reserved second run.
    const one = await viewer.client.graphql(
      `{ agents(first: 100) { edges { node { id trainingContext } } } }`,
    );
    assert.equal(one.status, 200);
    assert.equal(one.body.data.agents.edges.length, 15);
    assert.equal(one.body.data.agents.edges[0].node.trainingContext, BIG);
    // REST lists are bounded the same way; this one fits.
    const list = await viewer.client.get("/api/agents?limit=100");
    assert.equal(list.status, 200);
    assert.equal(list.body.data.length, 15);
    const health = await t.anon.get("/healthz");
    assert.equal(health.status, 200);
  } finally {
    await t.close();
  }
});

/** utime + stime of a process, in seconds (Linux /proc/<pid>/stat). */
async function cpuSeconds(pid: number): Promise<number> {
  const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime and stime are fields 14 and 15 of the whole line (11 and 12 after the command).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** A process' peak resident memory (VmHWM), in bytes. */
async function peakRss(pid: number): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

Deno.test("the 30-alias read costs PostgreSQL what the budget allows: under 1 CPU-s, no backend past 100 MB", async () => {
  const database = await createTestDatabase();
  // The app's own pool, whose backends (on this machine) the test watches.
  const pool = createPool(database.url, { max: 2, idleTimeoutMillis: POOL_IDLE_MS });
  const backends = new Set<number>();
  pool.on("connect", (client) => backends.add((client as unknown as { processID: number }).processID));
  const app = await buildApp(
    testConfig(database.url, { OUTBOUND_ALLOWLIST: "" }),
    { logger: silentLogger, db: createPrisma(database.url, { pool }), bootstrap: false },
  );
  try {
    const { workspaceId, owner } = await new Seed(app).workspace();
    await bigAgents(owner.client);
    const viewer = await new Seed(app).member(workspaceId, "VIEWER");
    assert.equal((await viewer.client.graphql(`{ agents(first: 1) { edges { node { id } } } }`)).status, 200);

    // Peaks start again from here ("5" resets VmHWM to the present resident size).
    const before = new Map<number, number>();
    for (const pid of backends) {
      await Deno.writeTextFile(`/proc/${pid}/clear_refs`, "5");
      before.set(pid, await cpuSeconds(pid));
    }
    const started = performance.now();
    const res = await viewer.client.graphql(BOMB);
    const elapsed = performance.now() - started;
    assert.equal(res.status, 400);
    assert.equal(res.body.errors[0].extensions.code, "RESPONSE_TOO_LARGE");
    assert.match(
      res.body.errors[0].message,
      /more than 33554432 bytes of JSON; at most 33554432 per request/,
    );

    let cpu = 0;
    let peak = 0;
    for (const pid of backends) {
      // A backend that started during the read counts from its start.
      cpu += await cpuSeconds(pid) - (before.get(pid) ?? 0);
      peak = Math.max(peak, await peakRss(pid));
    }
    console.log(
      `30-alias read: refused in ${elapsed.toFixed(0)} ms; PostgreSQL CPU ${cpu.toFixed(2)} s; peak backend ${
        (peak / 2 ** 20).toFixed(0)
      } MB`,
    );
    assert.ok(cpu < 1, `PostgreSQL spent ${cpu} CPU-s on the refused read`);
    assert.ok(peak < 100 * 2 ** 20, `a backend grew to ${peak} bytes`);
  } finally {
    await app.stop();
    await database.drop();
  }
});

Deno.test("a REST list over the byte budget is refused with 400 RESPONSE_TOO_LARGE; a smaller page answers", async () => {
  const t = await startTestApp({ READ_MAX_RESPONSE_BYTES: String(2 * 2 ** 20) });
  try {
    const { owner } = await t.seed.workspace();
    const agent = await owner.client.post("/api/agents", { name: "Big", trainingContext: BIG });
    assert.equal(agent.status, 201);
    // Five prompt versions of about 600 KB of JSON each.
    for (let i = 0; i < 4; i++) {
      const put = await owner.client.put(`/api/agents/${agent.body.id}/prompt`, {
        systemPrompt: BIG,
        rationale: `r${i}`,
      });
      assert.equal(put.status, 200);
    }
    const path = `/api/agents/${agent.body.id}/prompt-versions`;
    const res = await owner.client.get(`${path}?limit=100`);
    assert.equal(res.status, 400);
    assert.equal(res.headers.get("content-type"), "application/problem+json");
    assert.equal(res.body.code, "RESPONSE_TOO_LARGE");
    assert.match(res.body.detail, /at most 2097152 per request/);
    // Three versions (about 1.8 MB): over the first round trip's size, fetched once reserved.
    const page = await owner.client.get(`${path}?limit=3`);
    assert.equal(page.status, 200);
    assert.equal(page.body.data.length, 3);
    assert.equal(page.body.data[0].systemPrompt, BIG);
  } finally {
    await t.close();
  }
});

Deno.test("an exception thrown inside the driver's socket callback fails that request only", async () => {
  const database = await createTestDatabase();
  const pool = createPool(database.url, { max: 4, idleTimeoutMillis: POOL_IDLE_MS });
  // A fault in a listener of the wire protocol: thrown from the socket's data callback, once.
  let armed = false;
  let faultyPid: number | undefined;
  pool.on("connect", (client) => {
    const wire = (client as unknown as { connection: pg.Connection }).connection;
    wire.on("dataRow", (msg: { fields: unknown[] }) => {
      // A read's answer arrives as bytes (db/pool.ts TEXT_AS_BYTES), other values as text.
      const text = (f: unknown) => f instanceof Uint8Array ? new TextDecoder().decode(f) : String(f);
      if (armed && msg.fields.some((f) => text(f).includes("Fault line"))) {
        armed = false;
        faultyPid = (client as unknown as { processID: number }).processID;
        throw new RangeError("Cannot create a string longer than 0x1fffffe8 characters");
      }
    });
  });
  const app = await buildApp(
    testConfig(database.url, { OUTBOUND_ALLOWLIST: "" }),
    { logger: silentLogger, db: createPrisma(database.url, { pool }), bootstrap: false },
  );
  const side = new pg.Client({ connectionString: database.url });
  await side.connect();
  try {
    const { owner } = await new Seed(app).workspace();
    const created = await owner.client.post("/api/agents", { name: "Fault line" });
    assert.equal(created.status, 201);

    armed = true;
    const failed = await owner.client.get(`/api/agents/${created.body.id}`);
    assert.equal(failed.status, 500);
    assert.equal(failed.body.code, "INTERNAL");
    assert.doesNotMatch(JSON.stringify(failed.body), /0x1fffffe8|RangeError/);
    assert.equal(armed, false);

    // The process and the pool go on; the broken connection was discarded, its backend gone.
    const again = await owner.client.get(`/api/agents/${created.body.id}`);
    assert.equal(again.status, 200);
    assert.equal(again.body.name, "Fault line");
    for (;;) {
      const { rows } = await side.query(`SELECT 1 FROM pg_stat_activity WHERE pid = $1`, [faultyPid]);
      if (rows.length === 0) break;
    }
  } finally {
    await side.end();
    await app.stop();
    await database.drop();
  }
});
