/**
 * The event webhook registry over REST (docs/behaviour.md "Event webhooks and outbound
 * calls"), with the role table: create with a signing secret shown once, list, read, patch, rotate, delete;
 * outbound URL rule; reserved headers; header values masked for AGENT and VIEWER.
 */
import assert from "node:assert/strict";
import { Client, startTestApp } from "./_helpers/app.ts";
import { assertProblem, assertStatus, snapshot } from "./_helpers/problem.ts";
import { WEBHOOK_VIEW_KEYS } from "./_helpers/webhooks.ts";

const EVENTS = [
  "message.received",
  "message.sent",
  "conversation.opened",
  "conversation.closed",
  "human.transferred",
  "intent.fired",
];

Deno.test("event webhooks registry", async (t) => {
  const ta = await startTestApp();
  const { app, seed } = ta;
  const db = app.deps.db;
  try {
    const { workspaceId, owner } = await seed.workspace();
    const c = owner.client;
    const agent = await seed.agent(c);
    const otherAgent = await seed.agent(c, { name: "Other" });
    const base = `/api/agents/${agent.id}/webhooks`;
    let hook: Record<string, unknown> & { id: string } = { id: "" };
    let secret = "";

    await t.step(
      "create: 201 with signingSecret (whsec_), method POST by default, headers {} by default",
      async () => {
        const res = await c.post(base, {
          event: "message.received",
          url: "https://example.com/events",
          headers: { Authorization: "Bearer crm-secret", "X-Tenant": "acme" },
        });
        assertStatus(res, 201);
        assert.deepEqual(Object.keys(res.body).sort(), [...WEBHOOK_VIEW_KEYS, "signingSecret"].sort());
        assert.match(res.body.signingSecret, /^whsec_[A-Za-z0-9+/=]{20,}$/);
        assert.equal(res.body.method, "POST");
        assert.equal(res.body.event, "message.received");
        assert.equal(res.body.url, "https://example.com/events");
        assert.deepEqual(res.body.headers, { Authorization: "Bearer crm-secret", "X-Tenant": "acme" });
        assert.equal(res.body.lastError, null);
        assert.equal(res.body.agentId, agent.id);
        secret = res.body.signingSecret;
        const { signingSecret: _, ...view } = res.body;
        hook = view;
        const row = await db.eventWebhook.findUniqueOrThrow({ where: { id: hook.id } });
        assert.equal(app.deps.secrets.open(row.signingSecret), secret);
        const bare = await c.post(base, {
          event: "intent.fired",
          url: "https://example.com/bare",
          method: "PUT",
        });
        assertStatus(bare, 201);
        assert.deepEqual(bare.body.headers, {});
        assert.equal(bare.body.method, "PUT");
        assert.notEqual(bare.body.signingSecret, secret);
      },
    );

    await t.step("every subscribable event type is accepted", async () => {
      for (const event of EVENTS) {
        const res = await c.post(`/api/agents/${otherAgent.id}/webhooks`, {
          event,
          url: "https://example.com/e",
        });
        assertStatus(res, 201);
        assert.equal(res.body.event, event);
      }
      assert.equal(await db.eventWebhook.count({ where: { agentId: otherAgent.id } }), EVENTS.length);
    });

    await t.step("list and get: never the signing secret", async () => {
      const res = await c.get(base);
      assertStatus(res, 200);
      assert.equal(res.body.nextCursor, null);
      assert.equal(res.body.data.length, 2);
      for (const w of res.body.data) assert.deepEqual(Object.keys(w).sort(), WEBHOOK_VIEW_KEYS);
      assert.deepEqual(res.body.data[0], hook);
      const one = await c.get(`${base}/${hook.id}`);
      assertStatus(one, 200);
      assert.deepEqual(one.body, hook);
      assert.ok(!JSON.stringify([res.body, one.body]).includes(secret));
      assert.ok(!JSON.stringify([res.body, one.body]).includes("whsec_"));
      const paged = await c.get(`${base}?limit=1`);
      assert.equal(typeof paged.body.nextCursor, "string");
      assert.deepEqual(paged.body, { data: [hook], nextCursor: paged.body.nextCursor });
    });

    await t.step("patch: changes only the given fields", async () => {
      const res = await c.patch(`${base}/${hook.id}`, { event: "message.sent", method: "PATCH" });
      assertStatus(res, 200);
      assert.deepEqual(Object.keys(res.body).sort(), WEBHOOK_VIEW_KEYS);
      assert.equal(res.body.event, "message.sent");
      assert.equal(res.body.method, "PATCH");
      assert.equal(res.body.url, hook.url);
      assert.deepEqual(res.body.headers, hook.headers);
      const res2 = await c.patch(`${base}/${hook.id}`, {
        url: "https://example.com/v2",
        headers: { "X-New": "1" },
      });
      assertStatus(res2, 200);
      assert.equal(res2.body.url, "https://example.com/v2");
      assert.deepEqual(res2.body.headers, { "X-New": "1" });
      assert.equal(res2.body.event, "message.sent");
      assert.deepEqual((await c.get(`${base}/${hook.id}`)).body, res2.body);
      // The secret is not changed by a patch.
      assert.equal(
        app.deps.secrets.open(
          (await db.eventWebhook.findUniqueOrThrow({ where: { id: hook.id } })).signingSecret,
        ),
        secret,
      );
      // Any printable value, Latin-1 included, is a valid header value.
      const printable = { "X-New": "1", "X-Name": "José\tSilva", "X-Json": '{"a": [1, 2]}' };
      const res3 = await c.patch(`${base}/${hook.id}`, { headers: printable });
      assertStatus(res3, 200);
      assert.deepEqual(res3.body.headers, printable);
      hook = (await c.patch(`${base}/${hook.id}`, { headers: { "X-New": "1" } })).body;
    });

    await t.step("rotate-secret: a new secret, returned once, stored", async () => {
      const res = await c.post(`${base}/${hook.id}/rotate-secret`);
      assertStatus(res, 200);
      assert.deepEqual(Object.keys(res.body).sort(), [...WEBHOOK_VIEW_KEYS, "signingSecret"].sort());
      assert.match(res.body.signingSecret, /^whsec_/);
      assert.notEqual(res.body.signingSecret, secret);
      const row = await db.eventWebhook.findUniqueOrThrow({ where: { id: hook.id } });
      assert.equal(app.deps.secrets.open(row.signingSecret), res.body.signingSecret);
      assert.ok(!JSON.stringify((await c.get(`${base}/${hook.id}`)).body).includes(res.body.signingSecret));
      assertProblem(await c.post(`${base}/unknown/rotate-secret`), 404, "NOT_FOUND");
      secret = res.body.signingSecret;
    });

    await t.step("private URL refused on create and patch", async () => {
      const before = await snapshot(app);
      for (
        const url of [
          "http://10.0.0.1/x",
          "http://169.254.169.254/latest/meta-data",
          "http://192.168.0.1/",
          "http://[fd00::1]/",
          "http://metadata.google.internal/",
          "file:///etc/passwd",
          "not a url",
        ]
      ) {
        assertProblem(await c.post(base, { event: "message.sent", url }), 400, "VALIDATION_FAILED", ["url"]);
        assertProblem(await c.patch(`${base}/${hook.id}`, { url }), 400, "VALIDATION_FAILED", ["url"]);
      }
      assert.equal(await snapshot(app), before);
      const local = await c.post(base, { event: "message.sent", url: "http://127.0.0.1:9/hook" });
      assertStatus(local, 201);
      assertStatus(await c.delete(`${base}/${local.body.id}`), 204);
    });

    await t.step("unknown event, bad method, reserved or invalid headers -> 400", async () => {
      const before = await snapshot(app);
      const url = "https://example.com/x";
      const bad: Array<[Record<string, unknown>, string]> = [
        [{ event: "message.deleted", url }, "event"],
        [{ event: "MESSAGE.SENT", url }, "event"],
        [{ url }, "event"],
        [{ event: "message.sent" }, "url"],
        [{ event: "message.sent", url, method: "GET" }, "method"],
        [{ event: "message.sent", url, method: "DELETE" }, "method"],
        [{ event: "message.sent", url, headers: { "Content-Length": "5" } }, "headers.Content-Length"],
        [{ event: "message.sent", url, headers: { "X-Idempotency-Key": "k" } }, "headers.X-Idempotency-Key"],
        [
          { event: "message.sent", url, headers: { "webhook-signature": "v1,x" } },
          "headers.webhook-signature",
        ],
        [{ event: "message.sent", url, headers: { Host: "evil.example" } }, "headers.Host"],
        [{ event: "message.sent", url, headers: { "Bad Name": "v" } }, "headers.Bad Name"],
        [{ event: "message.sent", url, headers: { "X-A": "line\r\nX-Injected: 1" } }, "headers.X-A"],
        [{ event: "message.sent", url, headers: { "X-A": 1 } }, "headers.X-A"],
        // Values fetch() could not send later: beyond Latin-1, or control characters.
        [{ event: "message.sent", url, headers: { "X-A": "5 €" } }, "headers.X-A"],
        [{ event: "message.sent", url, headers: { "X-A": "a\u0001b" } }, "headers.X-A"],
        [{ event: "message.sent", url, headers: { "X-A": "a\u0000b" } }, "headers.X-A"],
        [{ event: "message.sent", url, headers: ["X-A"] }, "headers"],
        [{ event: "message.sent", url, secret: "mine" }, "secret"],
      ];
      for (const [input, field] of bad) {
        assertProblem(await c.post(base, input), 400, "VALIDATION_FAILED", [field]);
      }
      assertProblem(
        await c.patch(`${base}/${hook.id}`, { headers: { "content-length": "1" } }),
        400,
        "VALIDATION_FAILED",
        ["headers.content-length"],
      );
      assertProblem(await c.patch(`${base}/${hook.id}`, { event: "nope" }), 400, "VALIDATION_FAILED", [
        "event",
      ]);
      assertProblem(
        await c.patch(`${base}/${hook.id}`, { signingSecret: "whsec_x" }),
        400,
        "VALIDATION_FAILED",
        [
          "signingSecret",
        ],
      );
      assertProblem(await c.patch(`${base}/${hook.id}`, { lastError: null }), 400, "VALIDATION_FAILED", [
        "lastError",
      ]);
      assert.equal(await snapshot(app), before);
    });

    await t.step(
      "header values: visible to OWNER, MANAGER and API token; masked for AGENT and VIEWER",
      async () => {
        await c.patch(`${base}/${hook.id}`, {
          headers: { Authorization: "Bearer crm-secret", "X-Tenant": "acme" },
        });
        const token = (await c.post(`/api/workspaces/${workspaceId}/api-tokens`, { label: "t" })).body.token;
        const manager = await seed.member(workspaceId, "MANAGER");
        const visible = [c, manager.client, new Client(app, token, workspaceId)];
        for (const client of visible) {
          assert.deepEqual((await client.get(`${base}/${hook.id}`)).body.headers, {
            Authorization: "Bearer crm-secret",
            "X-Tenant": "acme",
          });
          const listed = (await client.get(base)).body.data.find((w: { id: string }) => w.id === hook.id);
          assert.equal(listed.headers.Authorization, "Bearer crm-secret");
        }
        for (const role of ["AGENT", "VIEWER"] as const) {
          const m = await seed.member(workspaceId, role);
          const one = await m.client.get(`${base}/${hook.id}`);
          assertStatus(one, 200);
          assert.deepEqual(one.body.headers, { Authorization: "********", "X-Tenant": "********" });
          const list = await m.client.get(base);
          assertStatus(list, 200);
          for (const w of list.body.data) {
            for (const v of Object.values(w.headers)) assert.equal(v, "********");
          }
          assert.ok(!JSON.stringify([one.body, list.body]).includes("crm-secret"));
          assert.ok(!JSON.stringify([one.body, list.body]).includes("whsec_"));
        }
      },
    );

    await t.step("unknown ids -> 404; a webhook under another agent -> 404", async () => {
      const before = await snapshot(app);
      assertProblem(await c.get(`${base}/unknown`), 404, "NOT_FOUND");
      assertProblem(await c.get("/api/agents/unknown/webhooks"), 404, "NOT_FOUND");
      assertProblem(
        await c.post("/api/agents/unknown/webhooks", { event: "message.sent", url: "https://example.com/" }),
        404,
        "NOT_FOUND",
      );
      const under = `/api/agents/${otherAgent.id}/webhooks/${hook.id}`;
      assertProblem(await c.get(under), 404, "NOT_FOUND");
      assertProblem(await c.patch(under, { method: "PUT" }), 404, "NOT_FOUND");
      assertProblem(await c.post(`${under}/rotate-secret`), 404, "NOT_FOUND");
      assertProblem(await c.delete(under), 404, "NOT_FOUND");
      assertProblem(await c.patch(`${base}/unknown`, { method: "PUT" }), 404, "NOT_FOUND");
      assertProblem(await c.delete(`${base}/unknown`), 404, "NOT_FOUND");
      assert.equal(await snapshot(app), before);
    });

    await t.step("delete: 204, then 404", async () => {
      assertStatus(await c.delete(`${base}/${hook.id}`), 204);
      assertProblem(await c.get(`${base}/${hook.id}`), 404, "NOT_FOUND");
      assertProblem(await c.delete(`${base}/${hook.id}`), 404, "NOT_FOUND");
      assert.equal(await db.eventWebhook.count({ where: { id: hook.id } }), 0);
      assert.equal((await c.get(base)).body.data.length, 1);
    });
  } finally {
    await ta.close();
  }
});
