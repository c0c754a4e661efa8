/**
 * The HTTP edge: x-request-id on every response, in log lines and in problem `instance`; one CORS
 * policy for REST and GraphQL; invalid UTF-8 and unreadable bodies as 400 problem+json; requests
 * whose client has gone stop before their next statement and log no error.
 */
import assert from "node:assert/strict";
import { startTestApp, testConfig } from "./_helpers/app.ts";
import { assertProblem } from "./_helpers/problem.ts";
import { createPrisma } from "../src/db/client.ts";
import { inRequestScope } from "../src/shared/request_scope.ts";
import { createTestDatabase } from "./_helpers/db.ts";
import { buildApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { Seed } from "./_helpers/app.ts";
import { logSink } from "./_helpers/logs.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Sends raw bytes on a new connection and reads until the server closes it. */
async function rawExchange(port: number, bytes: Uint8Array, closeAfterWrite = false): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(bytes);
  if (closeAfterWrite) {
    conn.close();
    return "";
  }
  const out: number[] = [];
  const buf = new Uint8Array(16384);
  for (;;) {
    const n = await conn.read(buf).catch(() => null);
    if (n === null) break;
    out.push(...buf.subarray(0, n));
  }
  conn.close();
  return dec.decode(new Uint8Array(out));
}

const latin1 = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));

/** Status, headers (lower-cased) and parsed body of a raw HTTP/1.1 answer. */
function parseRaw(text: string) {
  const [head, ...rest] = text.split("\r\n\r\n");
  const [statusLine, ...headerLines] = head.split("\r\n");
  const headers = new Headers(headerLines.map((l) => {
    const i = l.indexOf(":");
    return [l.slice(0, i).trim(), l.slice(i + 1).trim()] as [string, string];
  }));
  const bodyText = rest.join("\r\n\r\n");
  return {
    status: Number(statusLine.split(" ")[1]),
    headers,
    body: bodyText ? JSON.parse(bodyText) : null,
  };
}

Deno.test("x-request-id: echoed when sane, generated otherwise, on REST, GraphQL, /healthz, 404 and 405", async () => {
  const t = await startTestApp();
  try {
    const sent = { "x-request-id": "client-id-42" };
    for (
      const res of [
        await t.anon.get("/healthz", sent),
        await t.anon.get("/nope", sent),
        await t.anon.request("PATCH", "/api/agents", undefined, sent),
        await t.anon.get("/api/agents", sent),
        await t.anon.post("/graphql", { query: "{ __typename }" }, sent),
      ]
    ) {
      assert.equal(res.headers.get("x-request-id"), "client-id-42");
      if (res.status >= 400) assert.equal(res.body.instance, "urn:request:client-id-42");
    }
    assertProblem(await t.anon.get("/nope", sent), 404, "NOT_FOUND");
    assertProblem(await t.anon.request("PATCH", "/api/agents", undefined, sent), 405, "METHOD_NOT_ALLOWED");

    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    for (const bad of ["a".repeat(129), "has space", "naïve"]) {
      const res = await t.anon.get("/nope", { "x-request-id": bad });
      assert.match(res.headers.get("x-request-id") ?? "", uuid, bad);
      assert.equal(res.body.instance, `urn:request:${res.headers.get("x-request-id")}`);
    }
    const a = await t.anon.get("/healthz");
    const b = await t.anon.get("/healthz");
    assert.match(a.headers.get("x-request-id") ?? "", uuid);
    assert.notEqual(a.headers.get("x-request-id"), b.headers.get("x-request-id"));
    assert.equal(
      (await t.anon.get("/nope", { "x-request-id": "a".repeat(128) })).headers.get("x-request-id"),
      "a".repeat(128),
    );
  } finally {
    await t.close();
  }
});

Deno.test("log lines written while a request is handled carry its requestId; others carry none", async () => {
  const sink = logSink();
  await inRequestScope("req-7", undefined, async () => {
    sink.logger.info("inside");
    await Promise.resolve();
    sink.logger.info("after an await");
    setTimeout(() => sink.logger.info("timer started inside, run after the response"), 0);
  });
  sink.logger.info("outside");
  await sink.waitFor((l) => l.msg === "timer started inside, run after the response");
  assert.deepEqual(sink.lines.map((l) => [l.msg, l.requestId]), [
    ["inside", "req-7"],
    ["after an await", "req-7"],
    ["outside", undefined],
    ["timer started inside, run after the response", undefined],
  ]);
});

Deno.test("CORS: none by default; with CORS_ORIGINS one policy for REST and GraphQL, preflights 204", async () => {
  const origin = "https://app.example.test";
  const preflight = (path: string, from: string) =>
    t.anon.request("OPTIONS", path, undefined, {
      origin: from,
      "access-control-request-method": "POST",
      "access-control-request-headers": "authorization, content-type",
    });
  const corsHeaders = (h: Headers) => [...h.keys()].filter((k) => k.startsWith("access-control-"));

  let t = await startTestApp();
  try {
    const res = await t.anon.post("/graphql", { query: "{ __typename }" }, { origin });
    assert.equal(res.status, 200);
    assert.deepEqual(corsHeaders(res.headers), []);
    const pre = await preflight("/api/agents", origin);
    assertProblem(pre, 405, "METHOD_NOT_ALLOWED");
    assert.deepEqual(corsHeaders(pre.headers), []);
  } finally {
    await t.close();
  }

  t = await startTestApp({ CORS_ORIGINS: `${origin}, https://other.example.test` });
  try {
    for (const path of ["/api/agents", "/graphql", "/api/auth/login"]) {
      const pre = await preflight(path, origin);
      assert.equal(pre.status, 204, path);
      assert.equal(pre.headers.get("access-control-allow-origin"), origin);
      assert.equal(pre.headers.get("access-control-allow-methods"), "GET,POST,PUT,PATCH,DELETE");
      assert.equal(
        pre.headers.get("access-control-allow-headers"),
        "authorization,content-type,x-workspace-id,x-request-id",
      );
      assert.match(pre.headers.get("x-request-id") ?? "", /./);

      const denied = await preflight(path, "https://evil.example.test");
      assert.deepEqual(corsHeaders(denied.headers), [], path);
      assert.notEqual(denied.status, 204);
    }
    // The actual requests: exactly one allow-origin (Yoga's own CORS is off), ids readable.
    const gql = await t.anon.post("/graphql", { query: "{ __typename }" }, { origin });
    assert.equal(gql.status, 200);
    assert.equal(gql.headers.get("access-control-allow-origin"), origin);
    assert.match(gql.headers.get("access-control-expose-headers") ?? "", /x-request-id/);
    const rest = await t.anon.get("/api/agents", { origin });
    assertProblem(rest, 401, "UNAUTHENTICATED");
    assert.equal(rest.headers.get("access-control-allow-origin"), origin);
    assert.match(rest.headers.get("vary") ?? "", /origin/i);
    const other = await t.anon.get("/api/agents", { origin: "https://evil.example.test" });
    assert.deepEqual(corsHeaders(other.headers), []);
    // An OPTIONS that is no preflight is an ordinary request.
    assertProblem(
      await t.anon.request("OPTIONS", "/api/agents", undefined, { origin }),
      405,
      "METHOD_NOT_ALLOWED",
    );
  } finally {
    await t.close();
  }
});

Deno.test("CORS_ORIGINS that are not origins stop the start", () => {
  assert.throws(
    () => loadConfig({ CORS_ORIGINS: "https://ok.example.test,https://x.example.test/path" }),
    /CORS_ORIGINS: "https:\/\/x.example.test\/path" is not an origin/,
  );
  assert.deepEqual(loadConfig({}).corsOrigins, []);
});

Deno.test("invalid UTF-8 in a JSON body is 400 INVALID_UTF8 over REST and GraphQL, and nothing is stored", async () => {
  const t = await startTestApp();
  try {
    const { owner } = await t.seed.workspace();
    const badName = new Uint8Array([
      ...enc.encode('{"name":"A'),
      0xff,
      0xfe,
      ...enc.encode('","jobName":"Acme"}'),
    ]);
    assertProblem(await owner.client.post("/api/agents", badName), 400, "INVALID_UTF8");

    const mutation = 'mutation { createAgent(input: {name: "A\xff", jobName: "Acme"}) { id } }';
    const gqlBody = latin1(JSON.stringify({ query: mutation }));
    assertProblem(await owner.client.post("/graphql", gqlBody), 400, "INVALID_UTF8");
    // The same over application/graphql (Yoga's own parser for that type, checked first).
    assertProblem(
      await owner.client.post("/graphql", latin1(mutation), { "content-type": "application/graphql" }),
      400,
      "INVALID_UTF8",
    );
    assert.equal(await t.app.deps.db.agent.count(), 0);

    // Valid UTF-8 still works on both.
    assert.equal((await owner.client.post("/api/agents", { name: "Ana ñ", jobName: "Acme" })).status, 201);
    const ok = await owner.client.graphql(
      'mutation { createAgent(input: {name: "Bé", jobName: "Acme"}) { name } }',
    );
    assert.equal(ok.body.data.createAgent.name, "Bé");
  } finally {
    await t.close();
  }
});

Deno.test("raw HTTP: what reaches the app answers problem+json; what Deno's server refuses is its bare 400", async () => {
  const sink = logSink();
  const t = await startTestApp({ PORT: "0", HOST: "127.0.0.1" }, { logger: sink.logger });
  const { port } = await t.app.start();
  try {
    const ask = async (text: string) => parseRaw(await rawExchange(port, latin1(text)));
    const close = "Host: x\r\nConnection: close\r\n";

    // Malformed percent-encoding reaches the router: an ordinary problem.
    let res = await ask(`GET /api/agents/%zz HTTP/1.1\r\n${close}\r\n`);
    assert.equal(res.status, 401);
    assert.equal(res.headers.get("content-type"), "application/problem+json");
    assert.equal(res.body.code, "UNAUTHENTICATED");
    res = await ask(`GET /api/%E0%A4%A HTTP/1.1\r\n${close}\r\n`);
    assert.equal(res.body.code, "NOT_FOUND");
    assert.equal(res.body.instance, `urn:request:${res.headers.get("x-request-id")}`);

    // A broken chunked body: Deno's server drops the connection (no answer can be written); the
    // app's body read fails as MALFORMED_BODY, which is no error.
    const login = JSON.stringify({ email: "a@b.c", password: "x" });
    for (const path of ["/api/auth/login", "/graphql"]) {
      const raw = await rawExchange(
        port,
        latin1(
          `POST ${path} HTTP/1.1\r\n${close}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n` +
            `5\r\n${login.slice(0, 5)}\r\nzz\r\n${login.slice(5)}\r\n0\r\n\r\n`,
        ),
      );
      assert.equal(raw, "", path);
    }
    assert.equal((await ask(`GET /healthz HTTP/1.1\r\n${close}\r\n`)).status, 200);
    assert.deepEqual(sink.errors(), []);

    // Refused by Deno's HTTP server (hyper) before any of our code runs: Deno.serve's onError is
    // not called for these, so their empty 400 cannot be changed from the app.
    for (
      const text of [
        `GARBAGE\r\n\r\n`,
        `GET /a b HTTP/1.1\r\n${close}\r\n`,
        `POST /api/agents HTTP/1.1\r\n${close}Content-Length: abc\r\n\r\n`,
        `GET /healthz HTTP/1.1\r\n${close}X-A: a\x01b\r\n\r\n`,
      ]
    ) {
      const raw = await rawExchange(port, latin1(text));
      assert.match(raw, /^HTTP\/1\.1 400 Bad Request\r\n/, JSON.stringify(text));
      assert.match(raw, /content-length: 0\r\n/i);
    }
  } finally {
    await t.close();
  }
});

Deno.test("a client that goes away mid-body logs no error, on REST and GraphQL", async () => {
  const sink = logSink();
  const t = await startTestApp({ PORT: "0" }, { logger: sink.logger });
  const { port } = await t.app.start();
  try {
    for (const path of ["/api/auth/login", "/graphql"]) {
      await rawExchange(
        port,
        latin1(
          `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n` +
            `x-request-id: gone-${path}\r\n\r\n{"query":`,
        ),
        true,
      );
    }
    // Each request is over once a later request on the same server is answered.
    assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200);
    assert.deepEqual(sink.errors(), []);
  } finally {
    await t.close();
  }
});

/**
 * The client's signal is what Deno.serve hands over as `request.signal`; here the request is built
 * in-process with a signal the test aborts at an exact point (Deno's HTTP server reports a
 * disconnect only in some states of the connection, see the notes; that part is the runtime's).
 */
Deno.test("an aborted GraphQL mutation stops before its next statement and logs no error", async () => {
  const database = await createTestDatabase();
  const sink = logSink();
  let statements = 0;
  let onInsert: (() => void) | undefined;
  const db = createPrisma(database.url, {
    onQuery: (sql) => {
      statements++;
      if (/INSERT INTO "public"\."Agent"/.test(sql)) onInsert?.();
    },
  });
  const app = await buildApp(
    testConfig(database.url, { OUTBOUND_ALLOWLIST: "" }),
    { logger: sink.logger, db, bootstrap: false },
  );
  try {
    const { owner } = await new Seed(app).workspace();
    // 25 createAgent fields: a mutation runs them one after the other, each with its statements.
    const fields = Array.from({ length: 25 }, (_, i) => `a${i}: createAgent(input: {name: "A${i}"}) { id }`);
    const client = new AbortController();
    // The client gives up as soon as the first agent is written.
    onInsert = () => {
      onInsert = undefined;
      client.abort();
    };
    const res = await app.fetch(
      new Request("http://test.local/graphql", {
        method: "POST",
        headers: {
          authorization: `Bearer ${owner.token}`,
          "x-workspace-id": owner.client.workspaceId!,
          "content-type": "application/json",
          "x-request-id": "abandoned-1",
        },
        body: JSON.stringify({ query: `mutation { ${fields.join(" ")} }` }),
        signal: client.signal,
      }),
    );
    await res.body?.cancel();
    const afterResponse = statements;
    assert.equal(await app.deps.db.agent.count(), 1, "only the agent written before the abort");
    assert.ok(sink.lines.some((l) => l.msg === "client gone" && l.requestId === "abandoned-1"));
    // Nothing of the abandoned request runs later: one more request adds exactly its own statement.
    assert.equal((await app.fetch(new Request("http://test.local/healthz"))).status, 200);
    assert.equal(statements, afterResponse + 2, "the count above and SELECT 1 only");
    assert.deepEqual(sink.errors(), []);
  } finally {
    await app.stop();
    await database.drop();
  }
});

Deno.test("the request scope's check stops nothing outside requests and nothing after the response", async () => {
  const t = await startTestApp();
  try {
    // The same Db used by a job or a test outside any request runs normally.
    assert.equal(await t.app.deps.db.agent.count(), 0);
    const client = new AbortController();
    const res = await t.app.fetch(new Request("http://test.local/healthz", { signal: client.signal }));
    client.abort(); // after the response: no effect on anything the request started
    assert.equal(res.status, 200);
    assert.equal(await t.app.deps.db.agent.count(), 0);
  } finally {
    await t.close();
  }
});
