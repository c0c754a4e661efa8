/**
 * A POSTed GraphQL request whose client closes its socket stops before its next statement, over a
 * real socket: Deno.serve (2.9.6) does not abort `request.signal` for requests with a body this
 * size, so it is the kernel's socket table (src/shared/tcp_peers.ts) that tells.
 */
import assert from "node:assert/strict";
import { Seed, testConfig } from "./_helpers/app.ts";
import { createTestDatabase } from "./_helpers/db.ts";
import { createPrisma } from "../src/db/client.ts";
import { buildApp } from "../src/app.ts";
import { addressKey, readTable } from "../src/shared/tcp_peers.ts";
import { logSink } from "./_helpers/logs.ts";

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
  readTable(tcp6, 8080, states);
  readTable(tcp, 8080, states);
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
