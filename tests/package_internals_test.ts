/**
 * The private parts of pg, pg-protocol and graphql-yoga (with its GraphiQL page) the app relies on
 * live in one module per package (src/db/pg_internals.ts, src/graphql/yoga_internals.ts; pg-boss's
 * has its own test, ./pgboss_internals_test.ts). They were read in one version of each: this fails
 * when deno.lock holds another, naming what to read again, and checks each member or behaviour
 * relied on against the installed package, so that an upgrade that drops one fails here rather
 * than in production.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import pg from "pg";
import { createSchema, createYoga, type Plugin } from "graphql-yoga";
import {
  activeQueryTypes,
  bytesParser,
  cancelTargetOf,
  PG_PROTOCOL_VERIFIED,
  PG_VERIFIED,
  socketOf,
} from "../src/db/pg_internals.ts";
import { GuardedClient, TEXT_AS_BYTES } from "../src/db/pool.ts";
import {
  jsonMediaTypeOf,
  parseJsonWith,
  renderGraphiQLWith,
  sendJsonBytes,
  withJsonBytes,
  YOGA_VERIFIED,
} from "../src/graphql/yoga_internals.ts";
import { createTestDatabase } from "./_helpers/db.ts";

const FENCED = [
  { name: "pg", verified: PG_VERIFIED, module: "src/db/pg_internals.ts" },
  { name: "pg-protocol", verified: PG_PROTOCOL_VERIFIED, module: "src/db/pg_internals.ts" },
  { name: "graphql-yoga", verified: YOGA_VERIFIED, module: "src/graphql/yoga_internals.ts" },
  { name: "@graphql-yoga/render-graphiql", verified: YOGA_VERIFIED, module: "src/graphql/yoga_internals.ts" },
];

/** The versions of `name` deno.lock holds (its npm keys are `name@version` or `name@version_peer...`). */
function lockedVersions(name: string): string[] {
  const lock = JSON.parse(Deno.readTextFileSync(new URL("../deno.lock", import.meta.url)));
  return Object.keys(lock.npm ?? {}).filter((key) => key.startsWith(`${name}@`))
    .map((key) => key.slice(name.length + 1).split("_")[0]);
}

/** A module's header: the list of what it relies on. */
function headerOf(module: string): string {
  const text = Deno.readTextFileSync(new URL(`../${module}`, import.meta.url));
  return text.slice(0, text.indexOf("*/") + 2);
}

for (const { name, verified, module } of FENCED) {
  Deno.test(`deno.lock holds the ${name} version whose private parts were read (${verified})`, () => {
    const locked = lockedVersions(name);
    assert.deepEqual(
      locked,
      [verified],
      `${name} ${verified} was read; deno.lock holds ${locked.join(", ") || "none"}. Read again in ${name} ` +
        `${locked.join(", ")} what ${module} relies on, then update the version there:\n${headerOf(module)}`,
    );
  });
}

/** Imports of a fenced package's insides, and the one module each may appear in. */
const DEEP_IMPORTS = [
  { pattern: /^pg-protocol\//, module: "src/db/pg_internals.ts" },
  { pattern: /^pg\/lib/, module: "src/db/pg_internals.ts" },
  { pattern: /^pg-boss\/dist/, module: "src/jobs/pgboss_internals.ts" },
  {
    pattern: /^(graphql-yoga\/|@graphql-yoga\/(?!render-graphiql)|@whatwg-node\/)/,
    module: "src/graphql/yoga_internals.ts",
  },
];

Deno.test("the packages' insides are imported by their fenced modules only", async () => {
  const found: string[] = [];
  const walk = async (dir: string) => {
    for await (const entry of Deno.readDir(new URL(`../${dir}`, import.meta.url))) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory && entry.name !== "generated") await walk(path);
      else if (entry.isFile && path.endsWith(".ts")) {
        const text = await Deno.readTextFile(new URL(`../${path}`, import.meta.url));
        for (const [, specifier] of text.matchAll(/(?:from|import)\s*\(?\s*"([^"]+)"/g)) {
          const rule = DEEP_IMPORTS.find((r) => r.pattern.test(specifier));
          if (rule && rule.module !== path) found.push(`${path}: ${specifier} (belongs in ${rule.module})`);
        }
      }
    }
  };
  await walk("src");
  assert.deepEqual(found, []);
});

Deno.test("pg's private members are where pg_internals reads them", () => {
  const client = new pg.Client({ host: "127.0.0.1", port: 5432 });
  const own = client as unknown as Record<string, unknown>;
  const wire = own.connection as Record<string, unknown>;
  assert.equal(typeof wire.attachListeners, "function", "Client#connection.attachListeners");
  assert.equal(typeof wire.emit, "function", "Client#connection.emit");
  assert.equal(wire._emitMessage, false, "Client#connection._emitMessage");
  const stream = wire.stream as Record<string, unknown>;
  for (const method of ["emit", "on", "destroy", "cork", "uncork", "write"]) {
    assert.equal(typeof stream[method], "function", `Client#connection.stream.${method}`);
  }
  assert.equal(socketOf(client), stream);
  assert.equal(typeof own._getActiveQuery, "function", "Client#_getActiveQuery");
  assert.equal(activeQueryTypes(client), undefined);
  assert.ok("processID" in own && own.processID === null, "Client#processID");
  assert.ok("secretKey" in own && own.secretKey === null, "Client#secretKey");
  assert.equal(own.host, "127.0.0.1");
  assert.equal(own.port, 5432);
  assert.equal(cancelTargetOf(client), null);
});

/** A backend message: its code, its length (itself included) and its body. */
function packet(code: string, body: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.write(code, 0, "latin1");
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

Deno.test("pg-protocol's parser gives a data row's fields as bytes while they are wanted, else as text", () => {
  // DataRow with two fields: "é!" and NULL; then ParseComplete.
  const text = Buffer.from("é!");
  const row = Buffer.alloc(2 + 4 + text.length + 4);
  row.writeInt16BE(2, 0);
  row.writeInt32BE(text.length, 2);
  text.copy(row, 6);
  row.writeInt32BE(-1, 6 + text.length);
  const wire = Buffer.concat([packet("D", row), packet("1", Buffer.alloc(0))]);
  for (const wanted of [true, false]) {
    const seen: { name: string; fields?: unknown[] }[] = [];
    const parser = bytesParser(() => wanted);
    // Cut in two chunks, mid-row: the parser keeps what it has not used.
    parser.parse(wire.subarray(0, 9), (message) => seen.push(message));
    parser.parse(wire.subarray(9), (message) => seen.push(message));
    assert.deepEqual(seen.map((m) => m.name), ["dataRow", "parseComplete"]);
    assert.deepEqual(seen[0].fields, wanted ? [new Uint8Array(text), null] : ["é!", null]);
    if (wanted) assert.ok(seen[0].fields![0] instanceof Uint8Array && !Buffer.isBuffer(seen[0].fields![0]));
  }
});

Deno.test("pg's connection, through pg_internals: its reader, its cancel key, its socket", async () => {
  const database = await createTestDatabase();
  const client = new GuardedClient({ connectionString: database.url });
  const other = new GuardedClient({ connectionString: database.url });
  try {
    // Listening for `message` sets pg's _emitMessage; the reader must honour it.
    const names: string[] = [];
    const wire = (client as unknown as { connection: pg.Connection }).connection;
    wire.on("message", (message: { name: string }) => names.push(message.name));
    await client.connect();

    const [{ pid }] = (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows;
    const target = cancelTargetOf(client);
    assert.ok(target, "the cancel key (processID, secretKey)");
    // CancelRequest: length 16, code 80877102, the backend's process id, its secret key.
    const request = Buffer.from(target.request);
    assert.deepEqual([request.length, request.readInt32BE(0), request.readInt32BE(4)], [16, 16, 80877102]);
    assert.equal(request.readInt32BE(8), pid);

    const query = client.query({
      text: "SELECT $1::text AS t, 2 AS n, NULL::text AS z",
      values: ["é"],
      types: TEXT_AS_BYTES,
    });
    assert.equal(activeQueryTypes(client), TEXT_AS_BYTES, "Client#_getActiveQuery().types");
    const { rows } = await query;
    assert.deepEqual(rows, [{ t: new TextEncoder().encode("é"), n: 2, z: null }]);
    assert.ok(names.includes("dataRow") && names.includes("readyForQuery"), names.join());

    // Statements sent ahead go in the query's own (corked, joined) write and are answered first.
    client.sendAhead(["SET application_name = 'ahead'"]);
    const ahead = await client.query("SELECT current_setting('application_name') AS name WHERE $1", [true]);
    assert.deepEqual(ahead.rows, [{ name: "ahead" }]);
    assert.equal(client.sendingAhead, false);
    // pg's Terminate, written with a callback, still goes out: end() completes.
    await client.end();

    await other.connect();
    const ended = new Promise((resolve) => other.once("end", resolve));
    other.on("error", () => {});
    socketOf(other).destroy();
    await ended;
  } finally {
    await client.end().catch(() => {});
    await other.end().catch(() => {});
    await database.drop();
  }
});

const schema = createSchema({
  typeDefs: "type Query { hello: String }",
  resolvers: { Query: { hello: () => "text" } },
});

const ACCEPT_HEADERS = [
  undefined,
  "",
  "*/*",
  "application/json",
  "application/graphql-response+json",
  "application/graphql-response+json, application/json",
  "application/json, application/graphql-response+json",
  "application/*",
  "application/json; charset=utf-8",
  "application/json;charset=iso-8859-1",
  "application/json;charset=latin1, application/graphql-response+json",
  "text/event-stream",
  "text/event-stream, application/json",
  "application/json, text/event-stream",
  "multipart/mixed",
  "multipart/mixed, */*",
  "text/html",
  "text/html, */*;q=0.1",
];

/** A query of `{ hello }`, with `accept` as its Accept header (none when undefined). */
const requestFor = (accept?: string) =>
  new Request("http://localhost/graphql", {
    method: "POST",
    headers: { "content-type": "application/json", ...(accept === undefined ? {} : { accept }) },
    body: JSON.stringify({ query: "{ hello }" }),
  });

Deno.test("Yoga answers with its regular JSON processor, in the media type, exactly when jsonMediaTypeOf says", async () => {
  const yoga = createYoga({ schema, logging: false });
  for (const accept of ACCEPT_HEADERS) {
    const request = requestFor(accept);
    const res = await yoga.fetch(request);
    const expected = jsonMediaTypeOf(request);
    const type = res.headers.get("content-type");
    if (expected) assert.equal(type, `${expected}; charset=utf-8`, `Accept: ${accept}`);
    else assert.ok(!/json/.test(type ?? ""), `Accept: ${accept}: ${type}`);
    await res.body?.cancel();
  }
});

Deno.test("a result with bytes is answered with them where Yoga answers JSON, and serialized elsewhere", async () => {
  const bytes = new TextEncoder().encode('{"data":{"hello":"bytes"}}');
  const answerWithBytes: Plugin = {
    onExecute: ({ setResultAndStopExecution }) =>
      setResultAndStopExecution(
        withJsonBytes({ data: { hello: "text" }, stringify: () => '{"data":{"hello":"text"}}' }, bytes),
      ),
    onResultProcess: sendJsonBytes,
  };
  const plain = createYoga({ schema, logging: false });
  const yoga = createYoga({ schema, logging: false, plugins: [answerWithBytes] });
  let sent = 0;
  for (const accept of ACCEPT_HEADERS) {
    const request = requestFor(accept);
    const [res, reference] = await Promise.all([yoga.fetch(request), plain.fetch(requestFor(accept))]);
    const label = `Accept: ${accept}`;
    assert.equal(res.status, reference.status, label);
    assert.equal(res.headers.get("content-type"), reference.headers.get("content-type"), label);
    const body = await res.text();
    await reference.body?.cancel();
    if (jsonMediaTypeOf(request)) {
      assert.equal(body, '{"data":{"hello":"bytes"}}', label);
      sent++;
    } else if (res.status === 200) assert.match(body, /"hello":"text"/, label);
  }
  // All but text/html, multipart/mixed, an event stream and a charset other than UTF-8 alone.
  assert.equal(sent, ACCEPT_HEADERS.length - 4);
});

Deno.test("Yoga's JSON body parser reads a request through json() alone", async () => {
  const bodyReadBefore: Plugin = {
    onRequestParse: ({ requestParser, setRequestParser }) => {
      if (requestParser) setRequestParser(() => parseJsonWith(requestParser, '{"query":"{ hello }"}'));
    },
  };
  const yoga = createYoga({ schema, logging: false, plugins: [bodyReadBefore] });
  const res = await yoga.fetch(
    new Request("http://localhost/graphql", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ query: "{ __typename }" }),
    }),
  );
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { data: { hello: "text" } });
});

Deno.test("GraphiQL's page starts GraphiQL with one renderYogaGraphiQL call, which renderGraphiQLWith replaces", () => {
  const start = "function (root, options) { globalThis.started = [root, options]; }";
  const page = renderGraphiQLWith({ title: "t", headers: "{}" }, start);
  assert.equal(page.split(`(${start})(`).length, 2, "the start function is called once");
  assert.ok(
    !page.includes("YogaGraphiQL.renderYogaGraphiQL("),
    "GraphiQL's own start is not called directly",
  );
  // The same arguments: the root element and the options.
  assert.match(
    page,
    /\(function \(root, options\) \{[^}]*\}\)\(\s*window\.document\.querySelector\('#root'\),\s*\{"title":"t","headers":"\{\}"\},?\s*\)/,
  );
});
