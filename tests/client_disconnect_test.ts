/**
 * A POSTed GraphQL request whose client closes its socket stops before its next statement, over a
 * real socket: Deno.serve (2.9.6) does not abort `request.signal` for requests with a body this
 * size, so it is the kernel's socket table (src/shared/tcp_peers.ts) that tells.
 */
import assert from "node:assert/strict";
import { createConnection, type Socket } from "node:net";
import pg from "pg";
import { Seed, testConfig } from "./_helpers/app.ts";
import { createTestDatabase } from "./_helpers/db.ts";
import { createPrisma } from "../src/db/client.ts";
import { buildApp } from "../src/app.ts";
import { addressKey, readTable } from "../src/shared/tcp_peers.ts";
import { logSink } from "./_helpers/logs.ts";
import { type ServerProcess, startServerProcess } from "./_helpers/server_process.ts";
import { cancelStatement, createPool, stoppedWhenClientGone } from "../src/db/pool.ts";
import { POOL_IDLE_MS } from "../src/db/client.ts";
import { ClientGoneError, inRequestScope } from "../src/shared/request_scope.ts";

Deno.test("a POSTed GraphQL mutation whose client closed its socket stops before its next statement", async () => {
  const database = await createTestDatabase();
  const sink = logSink();
  let agentInserts = 0;
  const db = createPrisma(database.url, {
    onQuery: (sql) => {
      if (/INSERT INTO "public"\."Agent"/.test(sql)) agentInserts++;
    },
  });
  // The test's own connections: a lock that holds the request at a known statement, and reads.
  const side = createPrisma(database.url);
  const app = await buildApp(
    testConfig(database.url, { OUTBOUND_ALLOWLIST: "", HOST: "127.0.0.1", PORT: "0" }),
    { logger: sink.logger, db, bootstrap: false },
  );
  let stopped = false;
  const release = Promise.withResolvers<void>();
  let holder: Promise<unknown> | undefined;
  try {
    const { port } = await app.start();
    const { owner } = await new Seed(app).workspace();

    const locked = Promise.withResolvers<void>();
    holder = side.$transaction(async (tx) => {
      await tx.$executeRawUnsafe(`LOCK TABLE "Agent" IN ACCESS EXCLUSIVE MODE`);
      locked.resolve();
      await release.promise;
    }, { timeout: 60_000 });
    await locked.promise;

    // 25 createAgent fields (about 1.4 KB, past the ~512 bytes Deno watches): run one after the other.
    const fields = Array.from({ length: 25 }, (_, i) => `a${i}: createAgent(input: {name: "A${i}"}) { id }`);
    const body = new TextEncoder().encode(JSON.stringify({ query: `mutation { ${fields.join(" ")} }` }));
    assert.ok(body.length > 1000);
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    const head = `POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
      `Authorization: Bearer ${owner.token}\r\nx-workspace-id: ${owner.client.workspaceId}\r\n` +
      `x-request-id: gone-post\r\nContent-Length: ${body.length}\r\n\r\n`;
    await conn.write(new Uint8Array([...new TextEncoder().encode(head), ...body]));

    // The first INSERT waits on the lock: the body has been read and the resolvers run.
    for (;;) {
      const [{ n }] = await side.$queryRawUnsafe<{ n: number }[]>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO%'`,
      );
      if (n > 0) break;
    }
    conn.close();
    await sink.waitFor((l) => l.msg === "client connection closed" && l.requestId === "gone-post");

    // The blocked INSERT completes; the next field stops before its statement.
    release.resolve();
    await holder;
    await sink.waitFor((l) => l.msg === "client gone" && l.requestId === "gone-post");
    await app.stop(); // waits for the request's handler to return
    stopped = true;

    assert.equal(agentInserts, 1, "only the INSERT that was under way");
    assert.equal(await side.agent.count(), 1);
    assert.deepEqual(sink.errors(), []);
  } finally {
    release.resolve();
    await holder?.catch(() => {});
    if (!stopped) await app.stop();
    await side.$disconnect();
    await database.drop();
  }
});

Deno.test("the socket table is read per address family, IPv4-mapped clients as IPv4", () => {
  // Two lines of /proc/net/tcp6 and one of /proc/net/tcp (x86 byte order), our port 0x1F90 = 8080.
  const tcp6 = [
    "  sl  local_address                         remote_address                        st",
    "   0: 00000000000000000000000000000000:1F90 00000000000000000000000000000000:0000 0A",
    "   1: 0000000000000000FFFF00000100007F:1F90 0000000000000000FFFF00000100007F:D431 08",
    "   2: 00000000000000000000000001000000:1F90 00000000000000000000000001000000:D432 01",
  ].join("\n");
  const tcp = [
    "  sl  local_address rem_address   st",
    "   0: 0100007F:1F90 0200007F:D433 01",
    "   1: 0100007F:1F91 0200007F:D434 08",
  ].join("\n");
  const states = new Map<string, string>();
  assert.equal(readTable(tcp6, 8080, states), true, "the table lists the listening socket");
  assert.equal(readTable(tcp, 8080, states), false);
  const littleEndian = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
  if (!littleEndian) return; // the sample lines are in x86 order
  assert.deepEqual(
    [...states].sort(),
    [
      [addressKey("127.0.0.1", 0xd431), "08"],
      [addressKey("127.0.0.2", 0xd433), "01"],
      [addressKey("::1", 0xd432), "01"],
    ].sort(),
  );
  assert.equal(addressKey("::ffff:127.0.0.1", 1), addressKey("127.0.0.1", 1));
  assert.equal(addressKey("not an address", 1), undefined);
});

const OWNER = { email: "owner@example.com", password: "owner-password-1" };

/** The owner's login token and workspace, on a server that made its first owner from BOOTSTRAP_*. */
async function ownerOf(server: ServerProcess): Promise<{ token: string; workspaceId: string }> {
  const res = await fetch(`${server.url}/api/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(OWNER),
  });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  return { token: body.token, workspaceId: body.workspaces[0].id };
}

/** Read statements of the server's (the planner's own setting names them), and how many wait for a lock. */
async function planned(side: pg.Client): Promise<{ running: number; waiting: number }> {
  const { rows } = await side.query(
    `SELECT count(*)::int AS running, count(*) FILTER (WHERE wait_event_type = 'Lock')::int AS waiting
       FROM pg_stat_activity WHERE state = 'active' AND pid <> pg_backend_pid()
        AND query LIKE '%switchboard.read_bytes%'`,
  );
  return rows[0];
}

/** Waits until `check` holds, failing after `ms` (the deadline is the requirement, not a wait). */
async function eventually(what: string, ms: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
  }
}

/** What `promise` settles with, or "not settled" once `ms` have passed (the deadline is the requirement). */
async function within<T>(ms: number, promise: Promise<T>): Promise<T | "not settled"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"not settled">((resolve) => timer = setTimeout(resolve, ms, "not settled"));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Log lines of a server process (JSON, one a line). */
function logLines(server: ServerProcess): { level: string; msg: string; requestId?: string }[] {
  return server.stderr().split("\n").flatMap((line) => {
    try {
      return [JSON.parse(line)];
    } catch {
      return [];
    }
  });
}

/**
 * 30 reads held in PostgreSQL by a lock (20 GraphQL documents, 10 REST lists; a pool of 10, so
 * most wait for a connection), whose clients all go away at once, half closing their sockets and
 * half resetting them: within 2 s no read statement of theirs runs, none starts afterwards, and
 * nothing is logged above debug. Then 3 GraphQL reads over WebSockets that close mid-operation:
 * nothing logged above debug either.
 */
async function abandonThirtyReads(server: ServerProcess, databaseUrl: string): Promise<void> {
  const { token, workspaceId } = await ownerOf(server);
  const created = await fetch(`${server.url}/api/agents`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${token}`,
      "x-workspace-id": workspaceId,
    },
    body: JSON.stringify({ name: "Held" }),
  });
  assert.equal(created.status, 201, await created.text());
  // One connection holds the lock; another watches (a transaction sees pg_stat_activity as it was
  // when it first looked).
  const locker = new pg.Client({ connectionString: databaseUrl });
  const side = new pg.Client({ connectionString: databaseUrl });
  await locker.connect();
  await side.connect();
  const sockets: Socket[] = [];
  try {
    await locker.query(`BEGIN`);
    await locker.query(`LOCK TABLE "Agent" IN ACCESS EXCLUSIVE MODE`);
    const auth = `Authorization: Bearer ${token}\r\nx-workspace-id: ${workspaceId}\r\n`;
    const query = new TextEncoder().encode(
      JSON.stringify({ query: `{ agents(first: 5) { edges { node { id name } } } }` }),
    );
    for (let i = 0; i < 30; i++) {
      const head = i < 20
        ? `POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${auth}` +
          `x-request-id: gone-${i}\r\nContent-Length: ${query.length}\r\n\r\n`
        : `GET /api/agents?limit=5 HTTP/1.1\r\nHost: x\r\n${auth}x-request-id: gone-${i}\r\n\r\n`;
      const socket = createConnection(server.port, "127.0.0.1");
      socket.on("error", () => {});
      // One write each: Deno.serve then watches the small ones itself (request.signal).
      socket.write(i < 20 ? new Uint8Array([...new TextEncoder().encode(head), ...query]) : head);
      sockets.push(socket);
    }
    // Mid-flight: the pool's 10 connections each run a read held by the lock.
    await eventually(
      "10 reads waiting for the lock",
      30_000,
      async () => (await planned(side)).waiting >= 10,
    );
    sockets.forEach((socket, i) => i % 2 ? socket.resetAndDestroy() : socket.destroy());

    await eventually("no read statement running", 2_000, async () => (await planned(side)).running === 0);
    // Every request has ended as a client gone, and none started its statement since.
    await eventually("30 requests ended as clients gone", 10_000, async () => {
      // (A look at the database each time, which lets the server's log lines in.)
      assert.deepEqual(await planned(side), { running: 0, waiting: 0 }, "a read statement started");
      const gone = new Set(
        logLines(server).filter((l) => l.msg === "client gone").map((l) => l.requestId),
      );
      return Array.from({ length: 30 }, (_, i) => `gone-${i}`).every((id) => gone.has(id));
    });
    assert.deepEqual(await planned(side), { running: 0, waiting: 0 });
    await locker.query(`ROLLBACK`);

    // GraphQL over WebSocket: 3 sockets close while their reads wait for the lock. (Their
    // statements are not stopped: src/graphql/ws.ts runs operations outside any request scope.)
    await locker.query(`BEGIN`);
    await locker.query(`LOCK TABLE "Agent" IN ACCESS EXCLUSIVE MODE`);
    const webSockets = await Promise.all(Array.from({ length: 3 }, async (_, i) => {
      const ws = new WebSocket(`ws://127.0.0.1:${server.port}/graphql`, "graphql-transport-ws");
      const acked = new Promise<void>((resolve, reject) => {
        ws.onmessage = (e) => JSON.parse(String(e.data)).type === "connection_ack" ? resolve() : undefined;
        ws.onclose = () => reject(new Error("closed before connection_ack"));
      });
      await new Promise((resolve) => ws.onopen = resolve);
      ws.send(JSON.stringify({
        type: "connection_init",
        payload: { authorization: `Bearer ${token}`, "x-workspace-id": workspaceId },
      }));
      await acked;
      ws.send(JSON.stringify({
        id: `ws-${i}`,
        type: "subscribe",
        payload: { query: `{ agents(first: 5) { edges { node { id name } } } }` },
      }));
      return ws;
    }));
    await eventually(
      "3 WebSocket reads waiting for the lock",
      30_000,
      async () => (await planned(side)).waiting >= 3,
    );
    const closed = webSockets.map((ws) => new Promise((resolve) => ws.onclose = resolve));
    for (const ws of webSockets) ws.close();
    await Promise.all(closed);
    await locker.query(`ROLLBACK`);
    await eventually("the WebSocket reads ended", 10_000, async () => (await planned(side)).running === 0);

    const after = await fetch(`${server.url}/api/agents`, {
      headers: { authorization: `Bearer ${token}`, "x-workspace-id": workspaceId },
    });
    assert.equal(after.status, 200);
    assert.equal((await after.json()).data.length, 1);
    const loud = logLines(server).filter((l) => l.level === "error" || l.level === "warn");
    assert.deepEqual(loud, []);
  } finally {
    for (const socket of sockets) socket.destroy();
    await locker.end();
    await side.end();
  }
}

const SERVER_ENV = {
  LOG_LEVEL: "debug",
  DATABASE_POOL_SIZE: "10",
  BOOTSTRAP_OWNER_EMAIL: OWNER.email,
  BOOTSTRAP_OWNER_PASSWORD: OWNER.password,
};

Deno.test("30 reads abandoned mid-flight stop in PostgreSQL within 2 s, quietly: an external database", async () => {
  const database = await createTestDatabase();
  const server = await startServerProcess(database.url, SERVER_ENV);
  try {
    await abandonThirtyReads(server, database.url);
  } finally {
    await server.stop();
    await database.drop();
  }
});

Deno.test("30 reads abandoned mid-flight stop in PostgreSQL within 2 s, quietly: the embedded database", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "switchboard-embedded-" });
  // As root the embedded PostgreSQL runs as the postgres user, which must reach the directory.
  await Deno.chmod(dataDir, 0o755);
  const server = await startServerProcess("", { ...SERVER_ENV, DATA_DIR: dataDir });
  try {
    const password = (await Deno.readTextFile(`${dataDir}/postgres.password`)).trim();
    const port = (await Deno.readTextFile(`${dataDir}/postgres/postmaster.pid`)).split("\n")[3].trim();
    await abandonThirtyReads(
      server,
      `postgresql://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/switchboard`,
    );
  } finally {
    await server.stop();
    await Deno.remove(dataDir, { recursive: true }).catch(() => {});
  }
});

Deno.test("cancelStatement stops a statement through the protocol's CancelRequest", async () => {
  const database = await createTestDatabase();
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const side = new pg.Client({ connectionString: database.url });
    await side.connect();
    await side.query(`CREATE TABLE held (id int)`);
    await side.query(`BEGIN`);
    await side.query(`LOCK TABLE held IN ACCESS EXCLUSIVE MODE`);
    const running = client.query(`SELECT * FROM held`);
    await eventually("the statement waits", 10_000, async () => {
      const { rows } = await side.query(
        `SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'`,
        [
          (client as unknown as { processID: number }).processID,
        ],
      );
      return rows.length === 1;
    });
    cancelStatement(client);
    await assert.rejects(running, (e: { code?: string }) => e.code === "57014");
    await side.query(`ROLLBACK`);
    await side.end();
    // The connection goes on.
    assert.equal((await client.query(`SELECT 1 AS one`)).rows[0].one, 1);
  } finally {
    await client.end();
    await database.drop();
  }
});

Deno.test("a read whose client left fails with ClientGoneError: under way, or waiting for a connection", async () => {
  const database = await createTestDatabase();
  const pool = createPool(database.url, { max: 1, idleTimeoutMillis: POOL_IDLE_MS });
  const locker = new pg.Client({ connectionString: database.url });
  const side = new pg.Client({ connectionString: database.url });
  await locker.connect();
  await side.connect();
  try {
    await side.query(`CREATE TABLE held (id int)`);
    await locker.query(`BEGIN`);
    await locker.query(`LOCK TABLE held IN ACCESS EXCLUSIVE MODE`);
    const read = (signal: AbortSignal) =>
      inRequestScope("r", signal, () => stoppedWhenClientGone(() => pool.query(`SELECT * FROM held`)));
    const waiting = async () =>
      (await side.query(
        `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%held%'`,
      ))
        .rows.length;

    // The pool's one connection runs a read held by the lock; a second read waits for it.
    const first = new AbortController();
    const second = new AbortController();
    const running = read(first.signal);
    await eventually("the first read waits for the lock", 10_000, async () => await waiting() === 1);
    const queued = read(second.signal).then(() => "answered", (e) => e);
    second.abort();
    // Ended at once, while the lock still holds the connection it waited for.
    const ended = await within(2_000, queued);
    assert.ok(ended instanceof ClientGoneError, String(ended));

    first.abort();
    // Not pg's "Connection terminated unexpectedly": a client gone, whether or not a scope is current.
    await assert.rejects(running, ClientGoneError);
    await eventually("the statement stopped", 2_000, async () => await waiting() === 0);
    await locker.query(`ROLLBACK`);
    assert.equal((await pool.query(`SELECT count(*)::int AS n FROM held`)).rows[0].n, 0);
  } finally {
    await locker.end();
    await side.end();
    await pool.end();
    await database.drop();
  }
});
