/**
 * Bad input on every REST write endpoint (docs/behaviour.md "Requests and errors"): wrong types, unknown
 * enum values, missing required and unknown fields (400 VALIDATION_FAILED with `errors`), a body
 * that is not JSON (415), malformed JSON (400 MALFORMED_JSON), over 1 MiB (413), strings the
 * database cannot store (400), unknown ids and ids of another workspace (404). Nothing changes in
 * the database, and no call answers 500.
 */
import assert from "node:assert/strict";
import { Client, type Reply, startTestApp } from "./_helpers/app.ts";
import { assertProblem, snapshot } from "./_helpers/problem.ts";
import { DATE_INTENT } from "./_helpers/fixtures.ts";

const statuses: Array<[string, number]> = [];

/** A Client that records every status, to prove at the end that none was a 500. */
class Recording extends Client {
  override async request(method: string, path: string, body?: unknown, headers?: Record<string, string>) {
    const res = await super.request(method, path, body, headers);
    statuses.push([`${method} ${path}`, res.status]);
    return res;
  }
  override in(workspaceId: string | undefined): Recording {
    return new Recording(this.app, this.token, workspaceId);
  }
}

const INTENT = DATE_INTENT;
const HOOK = { event: "message.sent", url: "https://example.com/w" };

interface Endpoint {
  name: string;
  method: string;
  path: string;
  client: Client;
  /** A body the endpoint accepts (used to build the bad ones). */
  valid: Record<string, unknown>;
  /** [body, a field that `errors` must name]. */
  bad: Array<[unknown, string]>;
  /** Whether an absent body is acceptable (then `null` and non-objects are still refused). */
  optionalBody?: boolean;
}

Deno.test("bad input", async (t) => {
  const ta = await startTestApp();
  const { app, seed } = ta;
  try {
    // Workspace A: where the calls are made. Workspace B: owned by someone else.
    const A = await seed.workspace("A");
    const B = await seed.workspace("B");
    const anon = new Recording(app);
    const c = new Recording(app, A.owner.token, A.workspaceId);
    const cB = new Recording(app, B.owner.token, B.workspaceId);

    const make = async (client: Client, wsId: string) => {
      const agent = (await client.post("/api/agents", { name: "Ana" })).body.id as string;
      const intent = (await client.post(`/api/agents/${agent}/intents`, INTENT)).body.id as string;
      const webhook = (await client.post(`/api/agents/${agent}/webhooks`, HOOK)).body.id as string;
      await client.put(`/api/agents/${agent}/prompt`, { systemPrompt: "P", rationale: "r" });
      const version = (await client.get(`/api/agents/${agent}/prompt-versions`)).body.data[0].id as string;
      const invite = await client.post(`/api/workspaces/${wsId}/invites`, {
        email: "x@example.test",
        role: "AGENT",
      });
      const token = (await client.post(`/api/workspaces/${wsId}/api-tokens`, { label: "t" })).body
        .id as string;
      return {
        agent,
        intent,
        webhook,
        version,
        invite: invite.body.id as string,
        inviteToken: (invite.body.inviteUrl as string).split("/").pop()!,
        token,
      };
    };
    const a = await make(c, A.workspaceId);
    const b = await make(cB, B.workspaceId);
    for (const x of [a, b]) assert.ok(Object.values(x).every((v) => typeof v === "string" && v.length > 0));

    const endpoints: Endpoint[] = [
      {
        name: "login",
        method: "POST",
        path: "/api/auth/login",
        client: anon,
        valid: { email: "a@b.test", password: "x" },
        bad: [
          [{ email: 1, password: "x" }, "email"],
          [{ email: "a@b.test" }, "password"],
          [{ email: "no-at-sign", password: "x" }, "email"],
          [{ email: "a@b.test", password: "x", otp: "1" }, "otp"],
        ],
      },
      {
        name: "create workspace",
        method: "POST",
        path: "/api/workspaces",
        client: c,
        valid: { name: "W" },
        bad: [[{ name: 1 }, "name"], [{}, "name"], [{ name: ["W"] }, "name"], [{ name: "W", id: "x" }, "id"]],
      },
      {
        name: "create invite",
        method: "POST",
        path: `/api/workspaces/${A.workspaceId}/invites`,
        client: c,
        valid: { email: "new@example.test", role: "AGENT" },
        bad: [
          [{ email: "new@example.test", role: "ADMIN" }, "role"],
          [{ email: "new@example.test", role: "agent" }, "role"],
          [{ email: 5, role: "AGENT" }, "email"],
          [{ role: "AGENT" }, "email"],
          [{ email: "new@example.test" }, "role"],
          [{ email: "new@example.test", role: "AGENT", expiresAt: "2099-01-01" }, "expiresAt"],
        ],
      },
      {
        name: "create api token",
        method: "POST",
        path: `/api/workspaces/${A.workspaceId}/api-tokens`,
        client: c,
        valid: { label: "L" },
        bad: [[{ label: null }, "label"], [{}, "label"], [{ label: {} }, "label"], [{
          label: "L",
          token: "sbt_x",
        }, "token"]],
      },
      {
        name: "accept invite",
        method: "POST",
        path: `/invite/${a.inviteToken}`,
        client: anon,
        valid: { name: "N", password: "long enough" },
        bad: [
          [{ name: 5, password: "long enough" }, "name"],
          [{ name: "N" }, "password"],
          [{ password: 12345678 }, "password"],
          [{ password: "short" }, "password"],
          [{ password: "long enough", role: "OWNER" }, "role"],
        ],
      },
      {
        name: "create agent",
        method: "POST",
        path: "/api/agents",
        client: c,
        valid: { name: "New" },
        bad: [
          [{ name: 5 }, "name"],
          [{}, "name"],
          [{ name: "" }, "name"],
          [{ name: "x", template: "VENDAS" }, "template"],
          [{ name: "x", messageGroupingTime: "TURBO" }, "messageGroupingTime"],
          [{ name: "x", enabledEmoji: "yes" }, "enabledEmoji"],
          [{ name: "x", maxDailyMessages: 1.5 }, "maxDailyMessages"],
          [{ name: "x", autoCloseMinutes: 0 }, "autoCloseMinutes"],
          [{ name: "x", temperature: "hot" }, "temperature"],
          [{ name: "x", temperature: -1 }, "temperature"],
          [{ name: "x", jobSite: "not a url" }, "jobSite"],
          [{ name: "x", model: "" }, "model"],
          [{ name: "x", status: "PAUSED" }, "status"],
          [{ name: "x", systemPrompt: "mine" }, "systemPrompt"],
          [{ name: "x", foo: 1 }, "foo"],
        ],
      },
      {
        name: "replace agent",
        method: "PUT",
        path: `/api/agents/${a.agent}`,
        client: c,
        valid: { name: "Replaced" },
        bad: [
          [{}, "name"],
          [{ name: 5 }, "name"],
          [{ name: "x", template: "VENDAS" }, "template"],
          [{ name: "x", signMessages: 1 }, "signMessages"],
          [{ name: "x", messageGroupingTime: "fast" }, "messageGroupingTime"],
          [{ name: "x", maxDailyMessages: "10" }, "maxDailyMessages"],
          [{ name: "x", foo: 1 }, "foo"],
        ],
      },
      {
        name: "agent status",
        method: "PATCH",
        path: `/api/agents/${a.agent}/status`,
        client: c,
        valid: { status: "PAUSED" },
        bad: [
          [{ status: "DELETED" }, "status"],
          [{}, "status"],
          [{ status: 1 }, "status"],
          [{ status: "ACTIVE", name: "x" }, "name"],
        ],
      },
      {
        name: "agent prompt",
        method: "PUT",
        path: `/api/agents/${a.agent}/prompt`,
        client: c,
        valid: { systemPrompt: "S", rationale: "R" },
        bad: [
          [{ systemPrompt: 1, rationale: "r" }, "systemPrompt"],
          [{ rationale: "r" }, "systemPrompt"],
          [{ systemPrompt: "x" }, "rationale"],
          [{ systemPrompt: "x", rationale: "r", version: 2 }, "version"],
        ],
      },
      {
        name: "revert prompt",
        method: "POST",
        path: `/api/agents/${a.agent}/prompt-versions/${a.version}/revert`,
        client: c,
        valid: { rationale: "R" },
        optionalBody: true,
        bad: [[{ rationale: 1 }, "rationale"], [{ foo: 1 }, "foo"]],
      },
      {
        name: "create intent",
        method: "POST",
        path: `/api/agents/${a.agent}/intents`,
        client: c,
        valid: { ...INTENT, name: "Other" },
        bad: [
          [{ ...INTENT, triggerOnTypes: ["VIDEO"] }, "triggerOnTypes.0"],
          [{ ...INTENT, name: undefined }, "name"],
          [{ ...INTENT, requiredFields: "date" }, "requiredFields"],
          [
            { ...INTENT, requiredFields: [{ name: 1, type: "s", description: "d" }] },
            "requiredFields.0.name",
          ],
          [{ ...INTENT, webhookMethod: "GET" }, "webhookMethod"],
          [{ ...INTENT, webhookUrl: 42 }, "webhookUrl"],
          [{ ...INTENT, webhookUrl: "http://10.0.0.1/x" }, "webhookUrl"],
          [{ ...INTENT, tag: "x" }, "tag"],
          [{ ...INTENT, description: 1 }, "description"],
        ],
      },
      {
        name: "patch intent",
        method: "PATCH",
        path: `/api/agents/${a.agent}/intents/${a.intent}`,
        client: c,
        valid: { description: "new" },
        bad: [
          [{ triggerOnTypes: ["VIDEO"] }, "triggerOnTypes.0"],
          [{ name: 1 }, "name"],
          [{ webhookMethod: "DELETE" }, "webhookMethod"],
          [{ webhookUrl: "http://169.254.169.254/latest" }, "webhookUrl"],
          [{ agentId: b.agent }, "agentId"],
        ],
      },
      {
        name: "create webhook",
        method: "POST",
        path: `/api/agents/${a.agent}/webhooks`,
        client: c,
        valid: HOOK,
        bad: [
          [{ ...HOOK, event: "message.deleted" }, "event"],
          [{ url: HOOK.url }, "event"],
          [{ ...HOOK, url: 5 }, "url"],
          [{ ...HOOK, url: "http://10.0.0.1/" }, "url"],
          [{ ...HOOK, method: "GET" }, "method"],
          [{ ...HOOK, headers: { "Content-Length": "1" } }, "headers.Content-Length"],
          [{ ...HOOK, headers: "x" }, "headers"],
          [{ ...HOOK, headers: { "X-A": 1 } }, "headers.X-A"],
          [{ ...HOOK, id: "x" }, "id"],
        ],
      },
      {
        name: "patch webhook",
        method: "PATCH",
        path: `/api/agents/${a.agent}/webhooks/${a.webhook}`,
        client: c,
        valid: { method: "PUT" },
        bad: [
          [{ event: "x" }, "event"],
          [{ method: 1 }, "method"],
          [{ headers: { "X-Idempotency-Key": "k" } }, "headers.X-Idempotency-Key"],
          [{ url: "http://192.168.0.1/" }, "url"],
          [{ agentId: b.agent }, "agentId"],
        ],
      },
    ];

    for (const ep of endpoints) {
      await t.step(`${ep.name}: ${ep.method} ${ep.path.replace(/\/c[a-z0-9]{20,}/g, "/{id}")}`, async () => {
        const before = await snapshot(app);
        const send = (body: unknown, headers?: Record<string, string>) =>
          ep.client.request(ep.method, ep.path, body, headers);
        for (const [body, field] of ep.bad) {
          assertProblem(await send(body), 400, "VALIDATION_FAILED", [field]);
        }
        // Not an object.
        for (const body of ["[]", '"text"', "42", "true"]) {
          assertProblem(await send(body), 400, "VALIDATION_FAILED");
        }
        // Where a body is optional, an absent body and a JSON null both mean "none".
        if (!ep.optionalBody) {
          assertProblem(await send(undefined), 400, "VALIDATION_FAILED");
          assertProblem(await send("null"), 400, "VALIDATION_FAILED");
        }
        // Strings PostgreSQL cannot store.
        const firstString = Object.entries(ep.valid).find(([, v]) => typeof v === "string")!;
        for (const poison of ["a\u0000b", "a\ud800b"]) {
          assertProblem(await send({ ...ep.valid, [firstString[0]]: poison }), 400, "VALIDATION_FAILED", [
            firstString[0],
          ]);
        }
        // Not JSON, malformed JSON, too large.
        const json = JSON.stringify(ep.valid);
        assertProblem(await send(json, { "content-type": "text/plain" }), 415, "UNSUPPORTED_MEDIA_TYPE");
        assertProblem(
          await send(json, { "content-type": "application/x-www-form-urlencoded" }),
          415,
          "UNSUPPORTED_MEDIA_TYPE",
        );
        assertProblem(await send(json.slice(0, -1)), 400, "MALFORMED_JSON");
        assertProblem(await send("{'name': 'x'}"), 400, "MALFORMED_JSON");
        const huge = JSON.stringify({ ...ep.valid, [firstString[0]]: "x".repeat(1024 * 1024) });
        assertProblem(await send(huge), 413, "PAYLOAD_TOO_LARGE");
        assertProblem(await send(new TextEncoder().encode(huge)), 413, "PAYLOAD_TOO_LARGE");
        assert.equal(await snapshot(app), before, `${ep.name}: a refused call changed the database`);
      });
    }

    await t.step("a JSON body with a +json media type or a charset is accepted", async () => {
      const res = await c.post("/api/agents", JSON.stringify({ name: "Typed" }), {
        "content-type": "application/merge-patch+json; charset=utf-8",
      });
      assert.equal(res.status, 201);
      assert.equal((await c.delete(`/api/agents/${res.body.id}`)).status, 204);
    });

    await t.step(
      "GraphQL over GET with malformed JSON in variables or extensions -> 400 MALFORMED_JSON",
      async () => {
        const query = encodeURIComponent("query ($x: String) { __typename }");
        for (const client of [anon, c]) {
          for (const name of ["variables", "extensions"]) {
            for (const text of ["{bad", '{"a":', "\u0000", "{'x': 1}"]) {
              const res = await client.get(`/graphql?query=${query}&${name}=${encodeURIComponent(text)}`);
              assertProblem(res, 400, "MALFORMED_JSON");
              assert.match(res.body.detail, new RegExp(name));
            }
          }
        }
      },
    );

    await t.step("GraphQL bodies over 1 MiB -> 413 PAYLOAD_TOO_LARGE, declared or not", async () => {
      const query = "{ agents { edges { node { id } } } }";
      const huge = JSON.stringify({ query, variables: { pad: "x".repeat(1024 * 1024) } });
      const bytes = new TextEncoder().encode(huge);
      assertProblem(await c.post("/graphql", huge), 413, "PAYLOAD_TOO_LARGE");
      assertProblem(
        await c.post("/graphql", "{}", { "content-length": String(bytes.length) }),
        413,
        "PAYLOAD_TOO_LARGE",
      );
      // Chunked, without a declared length: cut off at the limit.
      const chunked = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 0; i < bytes.length; i += 64 * 1024) controller.enqueue(bytes.slice(i, i + 64 * 1024));
          controller.close();
        },
      });
      const res = await c.app.fetch(
        new Request("http://test.local/graphql", {
          method: "POST",
          headers: { authorization: `Bearer ${c.token}`, "content-type": "application/json" },
          body: chunked,
        }),
      );
      assertProblem(
        { status: res.status, headers: res.headers, body: await res.json() },
        413,
        "PAYLOAD_TOO_LARGE",
      );
      const small = JSON.stringify({ query });
      const ok = await c.post("/graphql", small, { "content-length": String(small.length) });
      assert.equal(ok.status, 200);
      assert.deepEqual(Object.keys(ok.body.data.agents), ["edges"]);
    });

    await t.step("an unknown path -> 404; a known path with another method -> 405 with Allow", async () => {
      assertProblem(await c.get("/api/nothing-here"), 404, "NOT_FOUND");
      assertProblem(await c.get(`/api/agents/${a.agent}/nothing`), 404, "NOT_FOUND");
      const cases: Array<[string, string, string]> = [
        ["PATCH", "/api/agents", "GET, POST"],
        ["POST", `/api/agents/${a.agent}`, "GET, PUT, DELETE"],
        ["DELETE", "/api/auth/login", "POST"],
        ["GET", `/api/agents/${a.agent}/status`, "PATCH"],
      ];
      for (const [method, path, allow] of cases) {
        const res = await c.request(method, path, method === "GET" ? undefined : {});
        assertProblem(res, 405, "METHOD_NOT_ALLOWED");
        assert.equal(res.headers.get("allow"), allow, `${method} ${path}`);
      }
    });

    await t.step("unknown ids -> 404 on every path with an id", async () => {
      const before = await snapshot(app);
      const ids = [
        "unknown",
        "c".repeat(25),
        "x".repeat(65),
        "%00",
        "a%00b",
        "%E2%82%AC",
        "%2F",
        "%ED%A0%80",
      ];
      for (const id of ids) {
        const calls: Array<Promise<Reply>> = [
          c.get(`/api/agents/${id}`),
          c.put(`/api/agents/${id}`, { name: "x" }),
          c.patch(`/api/agents/${id}/status`, { status: "PAUSED" }),
          c.put(`/api/agents/${id}/prompt`, { systemPrompt: "x", rationale: "r" }),
          c.get(`/api/agents/${id}/prompt-versions`),
          c.post(`/api/agents/${id}/prompt-versions/${a.version}/revert`),
          c.post(`/api/agents/${a.agent}/prompt-versions/${id}/revert`),
          c.delete(`/api/agents/${id}`),
          c.get(`/api/agents/${id}/intents`),
          c.post(`/api/agents/${id}/intents`, { ...INTENT, name: "New one" }),
          c.get(`/api/agents/${a.agent}/intents/${id}`),
          c.patch(`/api/agents/${a.agent}/intents/${id}`, { description: "x" }),
          c.delete(`/api/agents/${a.agent}/intents/${id}`),
          c.get(`/api/agents/${id}/intents/${a.intent}`),
          c.get(`/api/agents/${id}/webhooks`),
          c.post(`/api/agents/${id}/webhooks`, HOOK),
          c.get(`/api/agents/${a.agent}/webhooks/${id}`),
          c.patch(`/api/agents/${a.agent}/webhooks/${id}`, { method: "PUT" }),
          c.post(`/api/agents/${a.agent}/webhooks/${id}/rotate-secret`),
          c.delete(`/api/agents/${a.agent}/webhooks/${id}`),
          c.delete(`/api/workspaces/${A.workspaceId}/invites/${id}`),
          c.delete(`/api/workspaces/${A.workspaceId}/api-tokens/${id}`),
          anon.get(`/invite/${id}`),
          anon.post(`/invite/${id}`, { name: "N", password: "long enough" }),
        ];
        for (const res of await Promise.all(calls)) assertProblem(res, 404, "NOT_FOUND");
        // A workspace id in the path that is not the caller's: 403 (not a member), never 500.
        for (
          const res of await Promise.all([
            c.delete(`/api/workspaces/${id}`),
            c.get(`/api/workspaces/${id}/members`),
            c.post(`/api/workspaces/${id}/invites`, { email: "z@example.test", role: "AGENT" }),
            c.post(`/api/workspaces/${id}/api-tokens`, { label: "z" }),
          ])
        ) assertProblem(res, 403, "FORBIDDEN");
      }
      const unknownCursor = await c.get("/api/agents?cursor=unknown");
      assert.ok(unknownCursor.status === 200 || unknownCursor.status === 400, `${unknownCursor.status}`);
      assertProblem(await c.get("/api/agents?cursor=%00"), 400, "BAD_CURSOR");
      assertProblem(await c.get(`/api/agents/${a.agent}/intents?cursor=a%00`), 400, "BAD_CURSOR");
      assert.equal(await snapshot(app), before);
    });

    await t.step("ids of another workspace -> 404 on every path, and nothing changes", async () => {
      const before = await snapshot(app);
      const calls: Array<Promise<Reply>> = [
        c.get(`/api/agents/${b.agent}`),
        c.put(`/api/agents/${b.agent}`, { name: "Stolen" }),
        c.patch(`/api/agents/${b.agent}/status`, { status: "PAUSED" }),
        c.put(`/api/agents/${b.agent}/prompt`, { systemPrompt: "x", rationale: "r" }),
        c.get(`/api/agents/${b.agent}/prompt-versions`),
        c.post(`/api/agents/${b.agent}/prompt-versions/${b.version}/revert`),
        c.post(`/api/agents/${a.agent}/prompt-versions/${b.version}/revert`),
        c.delete(`/api/agents/${b.agent}`),
        c.get(`/api/agents/${b.agent}/intents`),
        c.post(`/api/agents/${b.agent}/intents`, { ...INTENT, name: "Planted" }),
        c.get(`/api/agents/${b.agent}/intents/${b.intent}`),
        c.get(`/api/agents/${a.agent}/intents/${b.intent}`),
        c.patch(`/api/agents/${b.agent}/intents/${b.intent}`, { description: "x" }),
        c.patch(`/api/agents/${a.agent}/intents/${b.intent}`, { description: "x" }),
        c.delete(`/api/agents/${b.agent}/intents/${b.intent}`),
        c.delete(`/api/agents/${a.agent}/intents/${b.intent}`),
        c.get(`/api/agents/${b.agent}/webhooks`),
        c.post(`/api/agents/${b.agent}/webhooks`, HOOK),
        c.get(`/api/agents/${b.agent}/webhooks/${b.webhook}`),
        c.get(`/api/agents/${a.agent}/webhooks/${b.webhook}`),
        c.patch(`/api/agents/${b.agent}/webhooks/${b.webhook}`, { method: "PUT" }),
        c.patch(`/api/agents/${a.agent}/webhooks/${b.webhook}`, { method: "PUT" }),
        c.post(`/api/agents/${a.agent}/webhooks/${b.webhook}/rotate-secret`),
        c.delete(`/api/agents/${b.agent}/webhooks/${b.webhook}`),
        c.delete(`/api/agents/${a.agent}/webhooks/${b.webhook}`),
        c.delete(`/api/workspaces/${A.workspaceId}/invites/${b.invite}`),
        c.delete(`/api/workspaces/${A.workspaceId}/api-tokens/${b.token}`),
      ];
      for (const res of await Promise.all(calls)) assertProblem(res, 404, "NOT_FOUND");
      assert.equal(await snapshot(app), before);
    });

    await t.step("no call of this file answered 500", () => {
      assert.ok(statuses.length > 400, `only ${statuses.length} calls recorded`);
      const fives = statuses.filter(([, s]) => s >= 500);
      assert.deepEqual(fives, []);
    });
  } finally {
    await ta.close();
  }
});
