/**
 * Property test (fast-check) over every REST route of the Hono router and every GraphQL mutation of
 * the schema, as the workspace OWNER (so role checks hide no validation): generated path ids (the
 * seeded workspace's real ones, other real ones and junk), query strings, bodies of wrong shapes and
 * values (NUL, unpaired surrogates, huge numbers, deep nesting, extra keys, arrays for objects,
 * strings for numbers, malformed and non-UTF-8 JSON), and GraphQL variables of wrong values.
 * For each: no 5xx; a 4xx is problem+json with a `code` (GraphQL: every error has an
 * `extensions.code`, never INTERNAL); a refused request changes no row of any public table.
 * FUZZ_SEED and FUZZ_RUNS (per route/mutation) replay or widen a run; a failure prints its seed.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  getNamedType,
  GraphQLEnumType,
  GraphQLInputObjectType,
  type GraphQLInputType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLScalarType,
  isLeafType,
} from "graphql";
import { Client, type Reply, startTestApp, type TestApp } from "./_helpers/app.ts";
import { restRoutes } from "../src/rest/router.ts";
import { buildSchema } from "../src/graphql/schema.ts";
import { startModelServer } from "./_helpers/conversations.ts";
import { actorOf, newApproval } from "./_helpers/approvals.ts";
import { DATE_INTENT } from "./_helpers/fixtures.ts";

const { schema } = buildSchema();

const SEED = Number(Deno.env.get("FUZZ_SEED") ?? Math.floor(Math.random() * 2 ** 31));
const RUNS = Number(Deno.env.get("FUZZ_RUNS") ?? 10);

/** Tables whose rows change on a refused request by design: the abuse-limit counters of failures. */
const VOLATILE_TABLES = new Set<string>(["RateLimit"]);

// ---- the seeded workspace: real ids, recreated when a successful call deleted one ----

type Ref =
  | "workspaceId"
  | "agentId"
  | "intentId"
  | "webhookId"
  | "versionId"
  | "deliveryId"
  | "inviteId"
  | "tokenId"
  | "inviteToken"
  | "memberId"
  | "channelId"
  | "conversationId"
  | "approvalId";
type Fixtures = Record<Ref, string>;
const REFS: Ref[] = [
  "workspaceId",
  "agentId",
  "intentId",
  "webhookId",
  "versionId",
  "deliveryId",
  "inviteId",
  "tokenId",
  "inviteToken",
  "memberId",
  "channelId",
  "conversationId",
  "approvalId",
];

const INTENT = DATE_INTENT;
const HOOK = { event: "message.sent", url: "https://example.com/w", headers: { "X-A": "b" } };

/** A body each route accepts, the base the generated bad bodies start from. */
const VALID: Record<string, unknown> = {
  "POST /api/auth/login": { email: "nobody@example.test", password: "wrong password" },
  // A wrong current password: the fuzz must not change the owner's.
  "POST /api/auth/password": { currentPassword: "wrong password", newPassword: "another long password" },
  "PATCH /api/workspaces/:workspaceId/members/:userId": { role: "VIEWER" },
  "POST /api/workspaces": { name: "W" },
  "POST /api/workspaces/:workspaceId/invites": { email: "i@example.test", role: "AGENT" },
  "POST /api/workspaces/:workspaceId/api-tokens": { label: "t" },
  "POST /invite/:token": { name: "N", password: "correct horse battery" },
  "POST /api/agents": { name: "Ana", temperature: 0.5, maxDailyMessages: 10, messageGroupingTime: "FAST" },
  "PUT /api/agents/:agentId": { name: "Ana", autoCloseMinutes: 30, enabledEmoji: false },
  "PATCH /api/agents/:agentId/status": { status: "PAUSED" },
  "PUT /api/agents/:agentId/prompt": { systemPrompt: "P", rationale: "r" },
  "POST /api/agents/:agentId/prompt-versions/:versionId/revert": { rationale: "r" },
  "POST /api/agents/:agentId/intents": INTENT,
  "PATCH /api/agents/:agentId/intents/:intentId": { description: "x", requiredFields: [] },
  "POST /api/agents/:agentId/webhooks": HOOK,
  "PATCH /api/agents/:agentId/webhooks/:webhookId": { method: "PUT", headers: {} },
  "POST /api/agents/:agentId/channels": { type: "API", label: "App" },
  "PATCH /api/agents/:agentId/channels/:channelId": { label: "Renamed" },
  "POST /api/channels/:channelId/messages": {
    contact: { externalId: "f1", name: "F" },
    type: "TEXT",
    content: "hi",
  },
  "POST /api/conversations/:conversationId/messages": { content: "Olá" },
  "POST /api/supervisor/chat": { message: "Make Ana more formal" },
};

async function created(res: Promise<Reply>, status = 201): Promise<string> {
  const r = await res;
  assert.equal(r.status, status, `fixture: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.id as string;
}

/**
 * Makes sure every fixture row still exists (a successful DELETE or accept may have used it).
 * `memberId` is a MANAGER of the workspace besides its owner.
 */
async function ensureFixtures(ta: TestApp, token: string, fx: Partial<Fixtures>): Promise<Fixtures> {
  const db = ta.app.deps.db;
  fx.memberId ??= (await ta.seed.user()).userId;
  const owner = new Client(ta.app, token);
  if (!fx.workspaceId || !(await db.workspace.findUnique({ where: { id: fx.workspaceId } }))) {
    fx.workspaceId = await created(owner.post("/api/workspaces", { name: "Fuzz" }));
  }
  const ws = fx.workspaceId;
  const c = owner.in(ws);
  await db.membership.upsert({
    where: { userId_workspaceId: { userId: fx.memberId, workspaceId: ws } },
    create: { userId: fx.memberId, workspaceId: ws, role: "MANAGER" },
    update: {},
  });
  if (!fx.agentId || !(await db.agent.findFirst({ where: { id: fx.agentId, workspaceId: ws } }))) {
    fx.agentId = await created(c.post("/api/agents", { name: "Ana" }));
  }
  const agentId = fx.agentId;
  if (!fx.intentId || !(await db.intent.findFirst({ where: { id: fx.intentId, agentId } }))) {
    const name = `I${crypto.randomUUID().slice(0, 8)}`;
    fx.intentId = await created(c.post(`/api/agents/${agentId}/intents`, { ...INTENT, name }));
  }
  if (!fx.webhookId || !(await db.eventWebhook.findFirst({ where: { id: fx.webhookId, agentId } }))) {
    fx.webhookId = await created(c.post(`/api/agents/${agentId}/webhooks`, HOOK));
  }
  const webhookId = fx.webhookId;
  if (!fx.deliveryId || !(await db.webhookDelivery.findFirst({ where: { id: fx.deliveryId, webhookId } }))) {
    fx.deliveryId = await created(c.post(`/api/agents/${agentId}/webhooks/${webhookId}/test`), 202);
  }
  if (!fx.versionId || !(await db.promptVersion.findFirst({ where: { id: fx.versionId, agentId } }))) {
    await c.put(`/api/agents/${agentId}/prompt`, { systemPrompt: "P", rationale: "r" });
    fx.versionId = (await c.get(`/api/agents/${agentId}/prompt-versions`)).body.data[0].id;
  }
  const invite = fx.inviteId &&
    await db.invite.findFirst({ where: { id: fx.inviteId, workspaceId: ws, acceptedAt: null } });
  if (!invite) {
    const res = await c.post(`/api/workspaces/${ws}/invites`, {
      email: `i${crypto.randomUUID().slice(0, 8)}@example.test`,
      role: "AGENT",
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    fx.inviteId = res.body.id;
    fx.inviteToken = (res.body.inviteUrl as string).split("/").pop()!;
  }
  if (
    !fx.tokenId ||
    !(await db.apiToken.findFirst({ where: { id: fx.tokenId, workspaceId: ws, revokedAt: null } }))
  ) {
    fx.tokenId = await created(c.post(`/api/workspaces/${ws}/api-tokens`, { label: "t" }));
  }
  // A PENDING approval (a successful approve or reject decides it).
  if (
    !fx.approvalId ||
    !(await db.pendingApproval.findFirst({
      where: { id: fx.approvalId, workspaceId: ws, status: "PENDING" },
    }))
  ) {
    fx.approvalId = await newApproval(await actorOf(ta.app, token, ws), agentId);
  }
  if (!fx.channelId || !(await db.channel.findFirst({ where: { id: fx.channelId, agentId } }))) {
    fx.channelId = await created(c.post(`/api/agents/${agentId}/channels`, { type: "API", label: "App" }));
  }
  const channelId = fx.channelId;
  if (
    !fx.conversationId || !(await db.conversation.findFirst({ where: { id: fx.conversationId, channelId } }))
  ) {
    const res = await c.post(`/api/channels/${channelId}/messages`, {
      contact: { externalId: "fuzz" },
      type: "TEXT",
      content: "hi",
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    fx.conversationId = res.body.conversationId;
  }
  return fx as Fixtures;
}

// ---- "nothing changed": a count and a hash of every row of every public table ----

async function snapshot(ta: TestApp): Promise<Record<string, string>> {
  const db = ta.app.deps.db;
  const tables = await db.$queryRawUnsafe<Array<{ name: string }>>(
    `SELECT tablename AS name FROM pg_tables
      WHERE schemaname = 'public' AND tablename <> '_prisma_migrations' ORDER BY 1`,
  );
  const parts = tables.filter((t) => !VOLATILE_TABLES.has(t.name)).map((t) =>
    `SELECT '${t.name}' AS name, count(*) || ':' || md5(coalesce(string_agg(r::text, '|' ORDER BY r::text), '')) AS h
       FROM "${t.name}" r`
  );
  const rows = await db.$queryRawUnsafe<Array<{ name: string; h: string }>>(parts.join(" UNION ALL "));
  return Object.fromEntries(rows.map((r) => [r.name, r.h]));
}

// ---- generators ----

/** Strings PostgreSQL or a parser might choke on. */
const nastyString = fc.oneof(
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constantFrom(
    "\0",
    "a\0b",
    "\uD800",
    "x\uDFFFy",
    "",
    " ",
    "x".repeat(20_000),
    "<transferir>",
    '\'; DROP TABLE "Agent"; --',
    "http://127.0.0.1:1/x",
    "http://localhost./x",
    "https://user:pass@example.com/?token=1",
    "1e309",
    "-1",
    "null",
    "__proto__",
  ),
);
const nastyNumber = fc.oneof(
  fc.constantFrom(1e308, -1e308, 2 ** 53 + 1, -0, 5e-324, 0.5, -1, 2 ** 31, 2 ** 31 - 1, -(2 ** 31) - 1, 0),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
);
/**
 * Arrays or objects nested up to thousands deep, generated as a `{ $deep }` placeholder that fill()
 * expands just before sending (fast-check's reporter cannot print values that deep).
 */
const deep = fc.record({ $deep: fc.integer({ min: 1, max: 5_000 }), arrays: fc.boolean() });
function expandDeep({ $deep, arrays }: { $deep: number; arrays: boolean }): unknown {
  let v: unknown = "x";
  for (let i = 0; i < $deep; i++) v = arrays ? [v] : { a: v };
  return v;
}
const nastyValue: fc.Arbitrary<unknown> = fc.oneof(
  nastyString,
  nastyNumber,
  fc.constantFrom(null, true, false, [], {}),
  fc.anything({ maxDepth: 3 }),
  deep,
  fc.array(nastyString, { maxLength: 3 }),
  fc.dictionary(nastyString, nastyString, { maxKeys: 3 }),
);

/** Raw bodies that are not a JSON value, or not UTF-8. */
const rawBody = fc.constantFrom<string | Uint8Array>(
  "{",
  '{"name":',
  "nul\0",
  '{"name":"\\u0000"}',
  '{"na\\u0000me":"x"}',
  '"\\ud800"',
  "[".repeat(5_000) + "]".repeat(5_000),
  new Uint8Array([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
  new Uint8Array([0xc0, 0x80]),
  "",
  "x".repeat(1024 * 1024 + 1),
);

/** Every string leaf (and object key) of a value, as setters that replace it. */
function stringLeaves(value: unknown): Array<(poison: string) => unknown> {
  if (typeof value === "string") return [(p) => value + p];
  if (Array.isArray(value)) {
    return value.flatMap((v, i) => stringLeaves(v).map((set) => (p: string) => value.with(i, set(p))));
  }
  if (value && typeof value === "object") {
    return Object.entries(value).flatMap(([k, v]) => [
      (p: string) => Object.fromEntries(Object.entries(value).map(([k2, v2]) => [k2 === k ? k + p : k2, v2])),
      ...stringLeaves(v).map((set) => (p: string) => ({ ...value, [k]: set(p) })),
    ]);
  }
  return [];
}

/** Bad bodies derived from a valid one: a field replaced, added, removed, retyped, or the whole body. */
function badBody(valid: unknown): fc.Arbitrary<unknown> {
  const base = (valid ?? {}) as Record<string, unknown>;
  const keys = Object.keys(base);
  const options: fc.Arbitrary<unknown>[] = [
    fc.constant(valid),
    nastyValue,
    rawBody,
    fc.tuple(nastyString, nastyValue).map(([k, v]) => ({ ...base, [k]: v })),
    fc.constant([base]),
    fc.constant(Object.fromEntries(Object.entries(base).map(([k, v]) => [k, JSON.stringify(v)]))),
  ];
  const leaves = stringLeaves(valid);
  if (leaves.length) {
    // One string (or key) anywhere in a valid body made unstorable: NUL or an unpaired surrogate.
    options.push(
      fc.tuple(
        fc.integer({ min: 0, max: leaves.length - 1 }),
        fc.constantFrom("\0", "a\0", "\uD800", "\uDC00x"),
      )
        .map(([i, poison]) => leaves[i](poison)),
    );
  }
  if (keys.length) {
    options.push(
      fc.tuple(fc.constantFrom(...keys), nastyValue).map(([k, v]) => ({ ...base, [k]: v })),
      fc.constantFrom(...keys).map((k) => {
        const { [k]: _, ...rest } = base;
        return rest;
      }),
    );
  }
  return fc.oneof(...options);
}

/** A path segment: a real id of the right kind, a real id of another kind, or (encoded) junk. */
type Segment = { ref: Ref } | { raw: string };
const junkSegment: fc.Arbitrary<Segment> = fc.oneof(
  fc.constantFrom("%00", "a%00b", "%ED%A0%80", "%FF", "%", "%zz", "x".repeat(65), "..", "%2F", "0", "-1")
    .map((raw) => ({ raw })),
  fc.string({ maxLength: 70 }).filter((s) => s.isWellFormed() && s.length > 0).map((s) => ({
    raw: encodeURIComponent(s),
  })),
);
function segment(ref: Ref | undefined): fc.Arbitrary<Segment> {
  const any = fc.constantFrom(...REFS).map((r): Segment => ({ ref: r }));
  return ref
    ? fc.oneof({ weight: 3, arbitrary: fc.constant<Segment>({ ref }) }, any, junkSegment)
    : junkSegment;
}
const PARAM_REF: Record<string, Ref> = {
  workspaceId: "workspaceId",
  agentId: "agentId",
  intentId: "intentId",
  webhookId: "webhookId",
  versionId: "versionId",
  deliveryId: "deliveryId",
  inviteId: "inviteId",
  tokenId: "tokenId",
  token: "inviteToken",
  userId: "memberId",
  channelId: "channelId",
  conversationId: "conversationId",
  approvalId: "approvalId",
};
const resolve = (s: Segment, fx: Fixtures) => "ref" in s ? encodeURIComponent(fx[s.ref]) : s.raw;

const queryString = fc.option(
  fc.array(
    fc.tuple(
      fc.constantFrom("cursor", "limit", "status", "first", "days", "x"),
      fc.oneof(
        fc.constantFrom("%00", "a%00b", "%ED%A0%80", "0", "-1", "501", "1e3", "abc", "", "%FF"),
        fc.string({ maxLength: 80 }).filter((s) => s.isWellFormed()).map(encodeURIComponent),
      ),
    ),
    { maxLength: 3 },
  ).map((pairs) => "?" + pairs.map(([k, v]) => `${k}=${v}`).join("&")),
  { nil: "" },
);

/** The lists that take ?cursor= and ?limit=. */
const PAGED =
  /\/(agents|intents|webhooks|prompt-versions|deliveries|invites|api-tokens|channels|conversations|messages|approvals|changes)$/;

// ---- assertions ----

/** Answers seen, printed at the end so a run shows what it exercised. */
const seen = new Map<string, number>();
const count = (k: string) => seen.set(k, (seen.get(k) ?? 0) + 1);

function assertRestReply(res: Reply, what: string): void {
  count(`REST ${res.status}${res.body?.code ? ` ${res.body.code}` : ""}`);
  const where = `${what} -> ${res.status} ${JSON.stringify(res.body)?.slice(0, 500)}`;
  assert.ok(res.status < 500, where);
  if (res.status >= 400) {
    assert.equal(res.headers.get("content-type"), "application/problem+json", where);
    assert.equal(typeof res.body?.code, "string", where);
    assert.match(res.body.code, /^[A-Z][A-Z_]+$/, where);
  }
}

function assertGraphReply(res: Reply, what: string): boolean {
  const where = `${what} -> ${res.status} ${JSON.stringify(res.body)?.slice(0, 500)}`;
  assert.ok(res.status < 500, where);
  const errors: Array<{ extensions?: { code?: unknown } }> = res.body?.errors ?? [];
  count(`GraphQL ${errors.length ? errors.map((e) => e.extensions?.code ?? "no code").join(",") : "ok"}`);
  for (const e of errors) {
    assert.equal(typeof e.extensions?.code, "string", where);
    assert.notEqual(e.extensions?.code, "INTERNAL", where);
  }
  if (res.status >= 400 && res.headers.get("content-type")?.startsWith("application/problem+json")) {
    assert.equal(typeof res.body?.code, "string", where); // refused before GraphQL (413, ...)
    return false;
  }
  return errors.length === 0;
}

// ---- GraphQL variables from the schema's argument types ----

type Gen = fc.Arbitrary<unknown>;
function forType(type: GraphQLInputType, idRef: Ref | undefined, depth = 0): Gen {
  if (type instanceof GraphQLNonNull) return forType(type.ofType, idRef, depth);
  if (type instanceof GraphQLList) return fc.array(forType(type.ofType, idRef, depth + 1), { maxLength: 3 });
  if (type instanceof GraphQLEnumType) return fc.constantFrom(...type.getValues().map((v) => v.value));
  if (type instanceof GraphQLInputObjectType) {
    const fields = Object.values(type.getFields());
    const model = Object.fromEntries(fields.map((f) => [f.name, forType(f.type, undefined, depth + 1)]));
    const required = fields.filter((f) => f.type instanceof GraphQLNonNull).map((f) => f.name);
    return fc.record(model, { requiredKeys: required });
  }
  const scalar = type as GraphQLScalarType;
  switch (scalar.name) {
    case "ID":
      return fc.oneof(
        { weight: 3, arbitrary: fc.constant({ ref: idRef ?? "agentId" }) },
        fc.constantFrom(...REFS).map((ref) => ({ ref })),
        nastyString,
      );
    case "Int":
      return fc.oneof(fc.integer(), fc.constantFrom(0, -1, 2 ** 31 - 1, -(2 ** 31)));
    case "Float":
      return nastyNumber;
    case "Boolean":
      return fc.boolean();
    case "JSON":
      return nastyValue;
    case "DateTime":
      return fc.oneof(nastyString, fc.date({ noInvalidDate: true }).map((d) => d.toISOString()));
    default:
      return nastyString;
  }
}

/** Which fixture an ID argument of a mutation names (`id` of deleteIntent is an intent, ...). */
function idRefOf(mutation: string, arg: string): Ref | undefined {
  if (arg in PARAM_REF) return PARAM_REF[arg];
  if (arg === "versionId") return "versionId";
  if (arg !== "id") return undefined;
  if (/Approval/.test(mutation)) return "approvalId";
  if (/Delivery/.test(mutation)) return "deliveryId";
  if (/Intent/.test(mutation)) return "intentId";
  if (/Webhook/.test(mutation)) return "webhookId";
  if (/Channel/.test(mutation)) return "channelId";
  if (/Invite/.test(mutation)) return "inviteId";
  if (/ApiToken/.test(mutation)) return "tokenId";
  if (/Workspace/.test(mutation)) return "workspaceId";
  if (/Conversation/.test(mutation)) return "conversationId";
  return "agentId";
}

/**
 * Replaces { ref } placeholders by the current fixtures' ids and expands { $deep } ones. They sit
 * at most a few levels down (argument, input field, list, body field).
 */
function fill(value: unknown, fx: Fixtures, depth = 0): unknown {
  if (depth > 5) return value;
  if (Array.isArray(value)) return value.map((v) => fill(v, fx, depth + 1));
  if (value && typeof value === "object") {
    if ("ref" in value && Object.keys(value).length === 1) return fx[(value as { ref: Ref }).ref];
    if ("$deep" in value && "arrays" in value) return expandDeep(value as { $deep: number; arrays: boolean });
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, fx, depth + 1)]));
  }
  return value;
}

Deno.test("fuzz: every REST route and GraphQL mutation answers bad input with a 4xx and changes nothing", async (t) => {
  // The supervisor's model: a valid chat is answered (no key would be a 503 by design).
  const model = startModelServer(() => ({ content: "ok" }));
  const ta = await startTestApp({ OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: model.baseUrl }, {
    workers: false,
  });
  try {
    const { owner: seeded } = await ta.seed.workspace();
    // The owner's credential: logged in again when a successful call (a logout, say) ended it.
    let token = seeded.token;
    const owner = {
      get token() {
        return token;
      },
      get client() {
        return new Client(ta.app, token);
      },
    };
    const relogin = async () => {
      if ((await owner.client.get("/api/auth/me")).status !== 401) return;
      const res = await ta.anon.post("/api/auth/login", { email: seeded.email, password: seeded.password });
      assert.equal(res.status, 200, `login again: ${res.status} ${JSON.stringify(res.body)}`);
      token = res.body.token;
    };
    const fx = await ensureFixtures(ta, owner.token, {});
    let before = await snapshot(ta);
    const settle = async (refused: boolean, what: string) => {
      if (refused) {
        assert.deepEqual(await snapshot(ta), before, `a refused request changed the database: ${what}`);
      } else {
        await relogin();
        await ensureFixtures(ta, owner.token, fx);
        before = await snapshot(ta);
      }
    };
    const params = { seed: SEED, numRuns: RUNS, endOnFailure: true };
    console.log(`fuzz seed ${SEED} (FUZZ_SEED=${SEED} replays it), ${RUNS} runs per route and mutation`);

    const routes = [
      ...new Map(
        restRoutes(ta.app.deps).routes
          .filter((r) => ["GET", "POST", "PUT", "PATCH", "DELETE"].includes(r.method))
          .map((r) => [`${r.method} ${r.path}`, r]),
      ).values(),
    ];
    assert.ok(routes.length >= 30, `routes found: ${routes.length}`);
    for (const key of Object.keys(VALID)) {
      assert.ok(
        routes.some((r) => `${r.method} ${r.path}` === key),
        `VALID names a route the router lacks: ${key}`,
      );
    }

    await t.step(`REST: ${routes.length} routes`, async () => {
      for (const route of routes) {
        const key = `${route.method} ${route.path}`;
        const names = [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1]);
        const args = fc.record({
          segments: fc.tuple(...names.map((n) => segment(PARAM_REF[n]))),
          query: route.method === "GET" ? queryString : fc.constant(""),
          body: route.method === "GET" // a GET cannot carry a body (the Request constructor refuses it)
            ? fc.constant(undefined)
            : route.method === "DELETE"
            ? fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, nastyValue)
            : badBody(VALID[key]),
          contentType: fc.oneof(
            { weight: 6, arbitrary: fc.constant("application/json") },
            fc.constantFrom(
              "text/plain",
              "application/merge-patch+json",
              "",
              "application/json; charset=latin1",
            ),
          ),
          workspaceHeader: fc.oneof(
            { weight: 4, arbitrary: fc.constant<Segment>({ ref: "workspaceId" }) },
            fc.constantFrom("", " ", "x".repeat(70), "caf\u00e9", "ws\u00ff").map((raw): Segment => ({
              raw,
            })),
          ),
        });
        await fc.assert(
          fc.asyncProperty(args, async ({ segments, query, body, contentType, workspaceHeader }) => {
            let i = 0;
            const path = route.path.replace(/:(\w+)/g, () => resolve(segments[i++], fx)) + query;
            const header = "ref" in workspaceHeader ? fx[workspaceHeader.ref] : workspaceHeader.raw;
            const res = await new Client(ta.app, owner.token).request(route.method, path, fill(body, fx), {
              "x-workspace-id": header,
              ...(body === undefined ? {} : { "content-type": contentType }),
            });
            const what = `${route.method} ${path} body=${JSON.stringify(body)?.slice(0, 300)}`;
            assertRestReply(res, what);
            await settle(res.status >= 300, what);
          }),
          params,
        );
      }
    });

    const mutations = Object.values(schema.getMutationType()!.getFields());
    await t.step(`GraphQL: ${mutations.length} mutations`, async () => {
      assert.ok(mutations.length >= 20, `mutations found: ${mutations.length}`);
      for (const m of mutations) {
        const vars = m.args.map((a, n) => `$v${n}: ${a.type}`).join(", ");
        const call = m.args.map((a, n) => `${a.name}: $v${n}`).join(", ");
        const selection = isLeafType(getNamedType(m.type)) ? "" : " { __typename }";
        const document = `mutation Fuzz${vars ? `(${vars})` : ""} { ${m.name}${
          call ? `(${call})` : ""
        }${selection} }`;
        const variables = fc.tuple(
          ...m.args.map((a) =>
            fc.oneof({ weight: 4, arbitrary: forType(a.type, idRefOf(m.name, a.name)) }, nastyValue)
          ),
        );
        await fc.assert(
          fc.asyncProperty(variables, async (values) => {
            const vs = Object.fromEntries(values.map((v, n) => [`v${n}`, fill(v, fx)]));
            const res = await owner.client.in(fx.workspaceId).graphql(document, vs);
            const what = `${m.name} ${JSON.stringify(vs).slice(0, 300)}`;
            const ok = assertGraphReply(res, what);
            await settle(!ok, what);
          }),
          params,
        );
      }
    });

    await t.step("NUL in every path id and in query strings: 4xx problem+json", async () => {
      for (const route of routes) {
        for (const nul of route.path.includes(":") ? ["%00", "a%00b"] : []) {
          const path = route.path.replace(/:(\w+)/g, () => nul);
          const res = await owner.client.in(fx.workspaceId).request(route.method, path);
          assertRestReply(res, `${route.method} ${path}`);
          assert.ok(res.status >= 400, `${route.method} ${path} -> ${res.status}`);
          await settle(true, path);
        }
        if (route.method === "GET") {
          const path = route.path.replace(/:(\w+)/g, (_, n) => encodeURIComponent(fx[PARAM_REF[n]])) +
            "?cursor=a%00b&status=%00&limit=%00";
          const res = await owner.client.in(fx.workspaceId).get(path);
          assertRestReply(res, `GET ${path}`);
          if (!PAGED.test(route.path)) continue;
          assert.equal(res.status, 400, `GET ${path} -> ${res.status} ${JSON.stringify(res.body)}`);
        }
      }
    });
    console.log([...seen].sort().map(([k, n]) => `${k}: ${n}`).join("\n"));
  } finally {
    await ta.close();
    await model.close();
  }
});

/** Sends raw bytes over TCP and returns the status of the answer (0 when the connection closed). */
async function rawStatus(port: number, request: string): Promise<number> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(new TextEncoder().encode(request));
    const buf = new Uint8Array(4096);
    const n = await conn.read(buf);
    const head = new TextDecoder().decode(buf.subarray(0, n ?? 0));
    return Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
  } finally {
    conn.close();
  }
}

Deno.test("NUL in header values and in the request line never reaches a 500", async () => {
  const ta = await startTestApp({ PORT: "0" }, { workers: false });
  try {
    const { workspaceId, owner } = await ta.seed.workspace();
    const { port } = await ta.app.start();
    const auth = `Authorization: Bearer ${owner.token}\r\n`;
    const cases = [
      `GET /api/agents HTTP/1.1\r\nHost: t\r\n${auth}x-workspace-id: ${workspaceId}\0\r\n\r\n`,
      `GET /api/agents HTTP/1.1\r\nHost: t\r\n${auth}x-workspace-id: \0\r\n\r\n`,
      `GET /api/agents HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \0\r\nx-workspace-id: ${workspaceId}\r\n\r\n`,
      `GET /api/agents?cursor=a\0b HTTP/1.1\r\nHost: t\r\n${auth}x-workspace-id: ${workspaceId}\r\n\r\n`,
      `GET /api/agents/a\0b HTTP/1.1\r\nHost: t\r\n${auth}x-workspace-id: ${workspaceId}\r\n\r\n`,
    ];
    for (const request of cases) {
      const status = await rawStatus(port, request);
      // The HTTP server refuses a malformed request itself (400) or closes the connection (0).
      assert.ok(status === 0 || (status >= 400 && status < 500), `${JSON.stringify(request)} -> ${status}`);
    }
  } finally {
    await ta.close();
  }
});
