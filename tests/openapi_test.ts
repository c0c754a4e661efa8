/**
 * The OpenAPI document (src/rest/openapi.ts) and its routes: it validates as OpenAPI 3.1, it lists
 * every route of the REST router and every capability, the reference page loads only our own files,
 * and real answers conform to the documented schemas (so the document is true, not only valid).
 */
import assert from "node:assert/strict";
import { z } from "zod";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { Validator } from "@seriousme/openapi-schema-validator";
import { type Reply, startTestApp } from "./_helpers/app.ts";
import { HOOK, INTENT_FIELDS } from "./_helpers/fixtures.ts";
import { CAPABILITIES } from "../src/capabilities.ts";
import { type Capability, defineOperation } from "../src/shared/capability.ts";
import { type JsonSchema, NON_CAPABILITY_ROUTES, openApiDocument } from "../src/rest/openapi.ts";
import { restRoutes } from "../src/rest/router.ts";
import { DOCS_ASSETS } from "../src/rest/openapi_routes.ts";
import { agentView } from "../src/agents/views.ts";
import { userView } from "../src/workspaces/views.ts";
import { actorOf, newApproval } from "./_helpers/approvals.ts";
import { buildSchema } from "../src/graphql/schema.ts";
import { readWithViews, viewOf } from "../src/reads/views.ts";

// The views of the declared types, as the app's setup hands them over (src/app.ts).
readWithViews(buildSchema().views);

/** A recursive schema: JSON Schema can say it only by reference. */
const TreeNode: z.ZodType<{ name: string; children: unknown[] }> = z.object({
  name: z.string(),
  get children() {
    return z.array(TreeNode);
  },
});

/** Operations of the shapes still to be declared (login, a create, a delete, a filtered GET). */
const SAMPLE_OPERATIONS: Capability[] = [
  defineOperation({
    name: "sampleLogin",
    summary: "Sample: a public write answering a described value.",
    access: { kind: "public" },
    params: {},
    input: z.strictObject({ email: z.string().trim().toLowerCase(), password: z.string().min(1) }),
    output: { schema: z.object({ token: z.string(), expiresAt: z.date() }), typeName: "SampleSession" },
    http: { method: "POST", path: "/api/sample/login" },
    run: () => Promise.resolve({ token: "t", expiresAt: new Date() }),
  }),
  defineOperation({
    name: "sampleCreateAgent",
    summary: "Sample: a create answering a view row with extra fields.",
    access: { kind: "workspace", action: "agent:write" },
    params: {},
    input: z.strictObject({
      name: z.string().transform((s) => s.trim()),
      tags: z.array(z.string()).refine((t) => new Set(t).size === t.length).optional(),
      owner: z.object({ id: z.string() }).meta({ id: "SampleOwner" }).optional(),
      tree: z.object({ root: TreeNode, other: TreeNode }).optional(),
    }),
    output: { view: agentView, extra: z.object({ secret: z.string() }) },
    http: { method: "POST", path: "/api/sample/agents", status: 201 },
    run: () => Promise.resolve({ id: "a" }),
  }),
  defineOperation({
    name: "sampleDeleteAgent",
    summary: "Sample: a delete with an id, answering nothing.",
    access: { kind: "workspace", action: "agent:write" },
    params: { agentId: "Agent" },
    output: { none: true },
    http: { method: "DELETE", path: "/api/sample/agents/{agentId}" },
    run: () => Promise.resolve(undefined),
  }),
  defineOperation({
    name: "sampleSearchUsers",
    summary: "Sample: a principal GET whose input is its query string.",
    access: { kind: "principal" },
    params: {},
    query: true,
    input: z.object({ q: z.string(), status: z.enum(["A", "B"]).optional() }),
    output: { view: userView },
    http: { method: "GET", path: "/api/sample/users" },
    run: () => Promise.resolve({ id: "u" }),
  }),
  defineOperation({
    name: "sampleTree",
    summary: "Sample: a recursive input and output.",
    access: { kind: "principal" },
    params: {},
    input: TreeNode,
    output: { schema: TreeNode, typeName: "SampleTree" },
    http: { method: "PUT", path: "/api/sample/tree" },
    run: () => Promise.resolve({ name: "t", children: [] }),
  }),
];

/** Router paths that are not in the document: the reference page's static files. */
const UNDOCUMENTED = (path: string) => path.startsWith(`${DOCS_ASSETS}/`);

/**
 * Hand-written routes whose capability is not declared yet at this branch point. When the
 * declarations arrive each entry must go (the test fails while a listed route is documented).
 */

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/** Every operation of the document as "METHOD path" -> operation object. */
function operations(doc: { paths: Record<string, Record<string, JsonSchema>> }): Map<string, JsonSchema> {
  const out = new Map<string, JsonSchema>();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (METHODS.includes(method)) out.set(`${method.toUpperCase()} ${path}`, op);
    }
  }
  return out;
}

async function validateOpenApi(doc: unknown) {
  const validator = new Validator();
  const result = await validator.validate(structuredClone(doc) as Record<string, unknown>);
  return { result, version: validator.version };
}

Deno.test("the document validates as OpenAPI 3.1, with the declared capabilities and sample operations", async () => {
  const doc = openApiDocument([...CAPABILITIES, ...SAMPLE_OPERATIONS]);
  const { result, version } = await validateOpenApi(doc);
  assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
  assert.equal(version, "3.1");
  assert.equal(doc.openapi, "3.1.0");

  // The validator can fail: a document without info.version is refused.
  const broken = structuredClone(doc) as JsonSchema;
  delete broken.info.version;
  assert.equal((await validateOpenApi(broken)).result.valid, false);

  // Every schema in it is valid JSON Schema 2020-12 (Ajv checks each against the meta-schema).
  const ajv = new Ajv2020({ strict: false });
  for (const [name, schema] of Object.entries(doc.components.schemas)) {
    assert.equal(ajv.validateSchema(schema), true, `${name}: ${JSON.stringify(ajv.errors)}`);
  }
});

Deno.test("every capability with an http binding is documented at its method and path, under its name", () => {
  const capabilities = [...CAPABILITIES, ...SAMPLE_OPERATIONS];
  const doc = openApiDocument(capabilities);
  const ops = operations(doc);
  const bound = capabilities.filter((c) => c.http);
  assert.equal(bound.length, CAPABILITIES.filter((c) => c.http).length + SAMPLE_OPERATIONS.length);
  for (const cap of bound) {
    const method = cap.kind === "read" ? "GET" : cap.http!.method;
    const op = ops.get(`${method} ${cap.http!.path}`);
    assert.ok(op, `${cap.name}: ${method} ${cap.http!.path} is not documented`);
    assert.equal(op.operationId, cap.name);
    assert.equal(op.summary, cap.summary);
  }
  const ids = [...ops.values()].map((op) => op.operationId);
  assert.equal(new Set(ids).size, ids.length, `duplicate operationIds: ${ids.sort().join(", ")}`);
  assert.equal(ids.length, bound.length + NON_CAPABILITY_ROUTES.length);

  // Two capabilities at one method and path cannot both be documented.
  assert.throws(
    () => openApiDocument([CAPABILITIES[0], { ...CAPABILITIES[0], name: "again" }]),
    /declared twice/,
  );
});

Deno.test("reads: path ids, the workspace header, page parameters and the row schemas REST answers", () => {
  const doc = openApiDocument(CAPABILITIES);
  const ops = operations(doc);
  const paramNames = (op: JsonSchema) =>
    op.parameters.map((p: JsonSchema) => p.$ref ? p.$ref.split("/").pop() : `${p.in}:${p.name}`);

  const agents = ops.get("GET /api/agents")!;
  assert.deepEqual(paramNames(agents), ["WorkspaceId", "Limit", "Cursor"]);
  const page = agents.responses["200"].content["application/json"].schema;
  assert.deepEqual(page.required, ["data", "nextCursor"]);
  assert.deepEqual(page.properties.data.items, { $ref: "#/components/schemas/AgentsItem" });
  // rest.fields selects and renames: the list shows `_count` (AgentCounts) and five fields.
  const item = doc.components.schemas.AgentsItem;
  assert.deepEqual(Object.keys(item.properties), ["id", "name", "status", "template", "model", "_count"]);
  assert.deepEqual(item.properties._count, { $ref: "#/components/schemas/AgentCounts" });
  assert.deepEqual(Object.keys(agents.responses).sort(), ["200", "400", "401", "403", "default"]);

  const agent = ops.get("GET /api/agents/{agentId}")!;
  assert.deepEqual(paramNames(agent), ["path:agentId", "WorkspaceId"]);
  assert.deepEqual(agent.responses["200"].content["application/json"].schema, {
    $ref: "#/components/schemas/Agent",
  });
  assert.deepEqual(Object.keys(agent.responses).sort(), ["200", "400", "401", "403", "404", "default"]);
  const schema = doc.components.schemas.Agent;
  assert.deepEqual(schema.properties.status, { $ref: "#/components/schemas/AgentStatus" });
  assert.deepEqual(schema.properties.temperature, { type: ["number", "null"] });
  assert.deepEqual(schema.properties.createdAt, { type: "string", format: "date-time" });
  // Connections and embedded objects are not part of a row: REST has routes or rest.fields for them.
  assert.equal("intents" in schema.properties, false);
  assert.equal("counts" in schema.properties, false);
  assert.deepEqual(doc.components.schemas.AgentStatus, {
    type: "string",
    enum: ["ACTIVE", "PAUSED"],
    description: "ACTIVE answers; PAUSED stores incoming messages without answering.",
  });

  // The workspace in the path: no header; members are unpaged (`data` only, no page parameters).
  const members = ops.get("GET /api/workspaces/{workspaceId}/members")!;
  assert.deepEqual(paramNames(members), ["path:workspaceId"]);
  assert.deepEqual(members.responses["200"].content["application/json"].schema.required, ["data"]);
  // Object and list relations are part of REST's row; JSON object types and lists have schemas.
  assert.deepEqual(doc.components.schemas.ApiToken.properties.createdBy.anyOf, [
    { $ref: "#/components/schemas/User" },
    { type: "null" },
  ]);
  assert.deepEqual(doc.components.schemas.WebhookDelivery.properties.attempts.items, {
    $ref: "#/components/schemas/WebhookDeliveryAttempt",
  });
  assert.deepEqual(doc.components.schemas.Intent.properties.requiredFields, {
    type: "array",
    items: { $ref: "#/components/schemas/RequiredField" },
  });
  assert.ok(doc.components.schemas.Webhook.properties.headers.description);
  assert.equal(doc.components.schemas.Webhook.properties.lastError.type, undefined); // JSON: any value
  assert.equal(ops.get("GET /api/agents/{agentId}/intents")!.tags[0], "intents");
  assert.equal(ops.get("GET /api/agents/{agentId}/webhooks/{webhookId}/deliveries")!.tags[0], "webhooks");
});

Deno.test("operations: bodies from zod, outputs, security and errors by access kind", () => {
  const doc = openApiDocument([...CAPABILITIES, ...SAMPLE_OPERATIONS]);
  const ops = operations(doc);

  const login = ops.get("POST /api/sample/login")!;
  assert.deepEqual(login.security, []);
  assert.equal(login.requestBody.required, true);
  assert.deepEqual(login.requestBody.content["application/json"].schema, {
    type: "object",
    properties: { email: { type: "string" }, password: { type: "string", minLength: 1 } },
    required: ["email", "password"],
    additionalProperties: false,
  });
  // A Date has no JSON Schema: any value rather than a failed generation.
  assert.deepEqual(login.responses["200"].content["application/json"].schema, {
    $ref: "#/components/schemas/SampleSession",
  });
  assert.deepEqual(doc.components.schemas.SampleSession.properties.expiresAt, {});
  assert.deepEqual(Object.keys(login.responses).sort(), [
    "200",
    "400",
    "409",
    "413",
    "415",
    "429",
    "default",
  ]);

  const create = ops.get("POST /api/sample/agents")!;
  assert.equal(create.security, undefined); // the document's bearer
  assert.deepEqual(create.parameters, [{ $ref: "#/components/parameters/WorkspaceId" }]);
  const body = create.requestBody.content["application/json"].schema;
  assert.deepEqual(body.properties.name, { type: "string" }); // the transform's input side
  assert.deepEqual(body.properties.tags, { type: "array", items: { type: "string" } }); // refinement dropped
  assert.deepEqual(body.properties.owner, { $ref: "#/components/schemas/SampleOwner" });
  assert.deepEqual(doc.components.schemas.SampleOwner.required, ["id"]);
  // Recursion: zod's generated $defs name becomes the operation's, and refs point into components.
  assert.deepEqual(body.properties.tree.properties.root, {
    $ref: "#/components/schemas/SampleCreateAgentInput1",
  });
  assert.deepEqual(doc.components.schemas.SampleCreateAgentInput1.properties.children.items, {
    $ref: "#/components/schemas/SampleCreateAgentInput1",
  });
  const tree = ops.get("PUT /api/sample/tree")!;
  assert.deepEqual(tree.requestBody.content["application/json"].schema, {
    $ref: "#/components/schemas/SampleTreeInput",
  });
  assert.deepEqual(doc.components.schemas.SampleTreeInput.properties.children.items, {
    $ref: "#/components/schemas/SampleTreeInput",
  });
  assert.deepEqual(tree.responses["200"].content["application/json"].schema, {
    $ref: "#/components/schemas/SampleTree",
  });
  assert.doesNotMatch(JSON.stringify(doc), /"\$ref":"#(\/\$defs\/[^"]*)?"/);
  const out = create.responses["201"].content["application/json"].schema;
  assert.deepEqual(Object.keys(out.properties), [...Object.keys(viewOf(agentView).fields), "secret"]);
  assert.ok(out.required.includes("secret") && out.required.includes("id"));
  assert.deepEqual(
    Object.keys(create.responses).sort(),
    ["201", "400", "401", "403", "409", "413", "415", "default"],
  );

  const del = ops.get("DELETE /api/sample/agents/{agentId}")!;
  assert.deepEqual(del.responses["204"], { description: "No content" });
  assert.equal(del.requestBody, undefined);
  assert.deepEqual(Object.keys(del.responses).sort(), ["204", "400", "401", "403", "404", "409", "default"]);

  const search = ops.get("GET /api/sample/users")!;
  assert.deepEqual(search.parameters, [
    { name: "q", in: "query", required: true, schema: { type: "string" } },
    { name: "status", in: "query", required: false, schema: { type: "string", enum: ["A", "B"] } },
  ]);
  assert.deepEqual(Object.keys(search.responses).sort(), ["200", "400", "401", "default"]);

  const problem = doc.components.schemas.Problem;
  assert.deepEqual(problem.required, ["type", "title", "status", "detail", "code"]);
  assert.ok(problem.properties.code.enum.includes("VALIDATION_FAILED"));
  assert.deepEqual(doc.components.responses.NotFound.content, {
    "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } },
  });
});

Deno.test("every route of the REST router is in the served document", async () => {
  const ta = await startTestApp({}, { workers: false });
  try {
    const served = await ta.anon.get("/api/openapi.json");
    assert.equal(served.status, 200);
    assert.equal(served.headers.get("content-type"), "application/json; charset=utf-8");
    assert.deepEqual(served.body, JSON.parse(JSON.stringify(openApiDocument(CAPABILITIES))));
    const documented = new Set(operations(served.body).keys());

    const routes = restRoutes(ta.app.deps).routes
      .filter((r) => r.method !== "ALL" && r.method !== "HEAD" && r.method !== "OPTIONS")
      .filter((r) => !UNDOCUMENTED(r.path))
      .map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, "{$1}")}`);
    assert.ok(routes.length >= 40, `only ${routes.length} routes`);
    const missing = routes.filter((r) => !documented.has(r));
    assert.deepEqual(missing, []);
    // What the document lists besides the router's routes: /healthz, served by app.ts.
    const extra = [...documented].filter((r) => !routes.includes(r));
    assert.deepEqual(extra, ["GET /healthz"]);
    assert.equal((await ta.anon.get("/healthz")).status, 200);
  } finally {
    await ta.close();
  }
});

Deno.test("GET /api/docs renders the document with files served by this server only", async () => {
  const ta = await startTestApp({}, { workers: false });
  try {
    const page = await ta.anon.get("/api/docs");
    assert.equal(page.status, 200);
    assert.equal(page.headers.get("content-type"), "text/html; charset=utf-8");
    const csp = page.headers.get("content-security-policy") ?? "";
    assert.match(csp, /(^|; )script-src 'self'(;|$)/);
    assert.match(csp, /(^|; )default-src 'none'(;|$)/);
    assert.equal(page.headers.get("x-content-type-options"), "nosniff");
    const html = page.body as string;
    // No inline script: every <script> has a src, and its element is empty.
    assert.deepEqual([...html.matchAll(/<script(?![^>]*\bsrc=)[^>]*>/g)], []);
    assert.deepEqual([...html.matchAll(/<script[^>]*>([^<]+)<\/script>/g)], []);
    const refs = [...html.matchAll(/<(?:script|link)\b[^>]*\b(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    assert.equal(refs.length, 4, html);
    const base = "http://test.local/api/docs";
    const types: Record<string, string> = {};
    for (const ref of refs) {
      assert.doesNotMatch(ref, /^(\w+:)?\/\//, `external reference ${ref}`);
      const url = new URL(ref, base);
      assert.equal(url.origin, "http://test.local");
      const res = await ta.anon.get(url.pathname);
      assert.equal(res.status, 200, url.pathname);
      assert.ok(String(res.body).length > 0, url.pathname);
      types[url.pathname.split("/").pop()!] = res.headers.get("content-type")!;
    }
    assert.deepEqual(types, {
      "swagger-ui.css": "text/css; charset=utf-8",
      "favicon-32x32.png": "image/png",
      "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
      "init.js": "text/javascript; charset=utf-8",
    });
    // The init script loads the document from this server, and Swagger UI's online validator is off.
    const init = await ta.anon.get(`${DOCS_ASSETS}/init.js`);
    assert.match(init.body, /url: "openapi\.json"/);
    assert.match(init.body, /validatorUrl: null/);
    assert.equal(new URL("openapi.json", base).pathname, "/api/openapi.json");
    const bundle = await ta.anon.get(`${DOCS_ASSETS}/swagger-ui-bundle.js`);
    assert.match(bundle.body, /SwaggerUIBundle/);
  } finally {
    await ta.close();
  }
});

Deno.test("real answers of every documented read conform to the documented schemas", async () => {
  const ta = await startTestApp({}, { workers: false });
  try {
    const { workspaceId, owner } = await ta.seed.workspace();
    const c = owner.client;
    const agent = await ta.seed.agent(c);
    await ta.seed.agent(c, { name: "Bea", temperature: 0.5 });
    const agentId = agent.id as string;
    const intent = await c.post(`/api/agents/${agentId}/intents`, {
      ...INTENT_FIELDS,
      name: "Schedule",
      requiredFields: [{ name: "date", type: "string", description: "when" }],
    });
    assert.equal(intent.status, 201);
    const hook = await c.post(`/api/agents/${agentId}/webhooks`, HOOK);
    assert.equal(hook.status, 201);
    const webhookId = hook.body.id as string;
    const sent = await c.post(`/api/agents/${agentId}/webhooks/${webhookId}/test`);
    assert.equal(sent.status, 202);
    const deliveryId = sent.body.id as string;
    // workers: false keeps the delivery unsent; one attempt row gives the attempts list an item.
    await ta.app.deps.db.deliveryAttempt.create({
      data: {
        deliveryId,
        number: 1,
        startedAt: new Date(),
        durationMs: 12,
        httpStatus: null,
        error: "refused",
      },
    });
    assert.equal(
      (await c.put(`/api/agents/${agentId}/prompt`, { systemPrompt: "P", rationale: "r" })).status,
      200,
    );
    assert.equal((await c.post(`/api/workspaces/${workspaceId}/api-tokens`, { label: "ci" })).status, 201);
    const invite = await c.post(`/api/workspaces/${workspaceId}/invites`, {
      email: "invitee@example.test",
      role: "AGENT",
    });
    assert.equal(invite.status, 201);
    const channel = await c.post(`/api/agents/${agentId}/channels`, { type: "API", label: "App" });
    assert.equal(channel.status, 201);
    const message = await c.post(`/api/channels/${channel.body.id}/messages`, {
      contact: { externalId: "u1", name: "Ana" },
      type: "TEXT",
      content: "hi",
    });
    assert.equal(message.status, 201);
    // A reply Meta delivered, with its pricing: a row of the usage.
    await ta.app.deps.db.message.create({
      data: {
        conversationId: message.body.conversationId,
        channelId: channel.body.id,
        direction: "OUTBOUND",
        senderKind: "AI",
        content: "hello",
        status: "DELIVERED",
        pricing: { category: "service", billable: false },
      },
    });
    const pinned = await c.post(`/api/agents/${agentId}/replay-cases`, {
      conversationId: message.body.conversationId,
    });
    assert.equal(pinned.status, 201);
    // A decided approval: every field of it set.
    const approvalId = await newApproval(await actorOf(ta.app, owner.token, workspaceId), agentId);
    assert.equal((await c.post(`/api/approvals/${approvalId}/approve`)).status, 200);
    const saved = await c.post("/api/saved-replies", { shortcut: "thanks", content: "Obrigado!" });
    assert.equal(saved.status, 201);
    const { contactId } = await ta.app.deps.db.conversation.findUniqueOrThrow({
      where: { id: message.body.conversationId },
    });
    const ids: Record<string, string> = {
      savedReplyId: saved.body.id,
      contactId,
      approvalId,
      workspaceId,
      agentId,
      intentId: intent.body.id,
      webhookId,
      deliveryId,
      conversationId: message.body.conversationId,
    };

    const doc = (await ta.anon.get("/api/openapi.json")).body;
    // Strict reading: a documented object has no property the document does not list.
    for (const schema of Object.values(doc.components.schemas) as JsonSchema[]) {
      if (schema.type === "object" && schema.properties) schema.additionalProperties = false;
    }
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv); // CommonJS: the plugin is also its own `default`
    ajv.addSchema({ ...doc, $id: "https://switchboard.test/openapi.json" });
    const check = (op: string, pointer: string, res: Reply) => {
      const validate = ajv.getSchema(`https://switchboard.test/openapi.json#${pointer}`);
      assert.ok(validate, pointer);
      assert.equal(
        validate(res.body),
        true,
        `${op}: ${JSON.stringify(validate.errors)}\n${JSON.stringify(res.body)}`,
      );
    };
    const pointer = (...parts: string[]) =>
      "/" + parts.map((p) => p.replaceAll("~", "~0").replaceAll("/", "~1")).join("/");

    const exercised: string[] = [];
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, JsonSchema>>)) {
      const op = item.get;
      if (!op || !path.startsWith("/api/") || path === "/api/openapi.json" || path === "/api/docs") continue;
      const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      if (!names.every((n) => n in ids)) continue;
      const url = path.replace(/\{(\w+)\}/g, (_, n) => ids[n]);
      const res = await c.get(url);
      assert.equal(res.status, 200, `${url}: ${JSON.stringify(res.body)}`);
      assert.equal(res.headers.get("content-type"), "application/json");
      check(
        op.operationId,
        pointer("paths", path, "get", "responses", "200", "content", "application/json", "schema"),
        res,
      );
      if (Array.isArray(res.body.data)) {
        assert.ok(res.body.data.length > 0, `${url}: an empty list proves little`);
      }
      exercised.push(op.operationId);

      // Its documented errors are true too: without credentials, and with an unknown id.
      const anon = await ta.anon.get(url);
      assert.equal(anon.status, 401);
      assert.ok(op.responses["401"]);
      check(op.operationId, "/components/schemas/Problem", anon);
      if (names.some((n) => n !== "workspaceId")) {
        const unknown = await c.get(url.replace(ids[names[names.length - 1]], "unknown0id"));
        assert.equal(unknown.status, 404, JSON.stringify(unknown.body));
        assert.ok(op.responses["404"]);
        check(op.operationId, "/components/schemas/Problem", unknown);
      }
    }
    for (
      const name of [
        "members",
        "invites",
        "apiTokens",
        "agents",
        "agent",
        "promptVersions",
        "intents",
        "intent",
        "webhooks",
        "webhook",
        "webhookDeliveries",
        "webhookDelivery",
        "workspace",
        "usage",
      ]
    ) assert.ok(exercised.includes(name), `${name} was not exercised`);

    // A negative control: the strict schema refuses an answer with a field it does not document.
    const validate = ajv.getSchema("https://switchboard.test/openapi.json#/components/schemas/Agent")!;
    const one = await c.get(`/api/agents/${agentId}`);
    assert.equal(validate(one.body), true);
    assert.equal(validate({ ...one.body, extra: 1 }), false);
    assert.equal(validate({ ...one.body, createdAt: "yesterday" }), false);
  } finally {
    await ta.close();
  }
});
