/**
 * Intents over REST (docs/behaviour.md "Agents, prompts and intents"): create with a derived tag,
 * list, read, patch, delete; duplicate tags; outbound URL rule for webhookUrl.
 */
import assert from "node:assert/strict";
import { startTestApp } from "./_helpers/app.ts";
import { assertProblem, assertStatus, snapshot } from "./_helpers/problem.ts";

const INTENT_KEYS = [
  "agentId",
  "createdAt",
  "description",
  "id",
  "name",
  "requiredFields",
  "tag",
  "triggerOnTypes",
  "updatedAt",
  "webhookMethod",
  "webhookUrl",
];

const body = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  description: "When the customer wants a visit",
  triggerOnTypes: ["TEXT", "AUDIO"],
  requiredFields: [
    { name: "date", type: "string", description: "the day" },
    { name: "address", type: "string", description: "where" },
  ],
  webhookUrl: "https://example.com/hooks/visit",
  ...extra,
});

Deno.test("intents", async (t) => {
  const ta = await startTestApp();
  const { app, seed } = ta;
  try {
    const { owner } = await seed.workspace();
    const c = owner.client;
    const agent = await seed.agent(c);
    const otherAgent = await seed.agent(c, { name: "Other" });
    const base = `/api/agents/${agent.id}/intents`;
    let visit: Record<string, unknown> & { id: string } = { id: "" };

    await t.step(
      "create: 201 with the record, tag from the name, webhookMethod POST by default",
      async () => {
        const res = await c.post(base, body("Agendar Visita"));
        assertStatus(res, 201);
        assert.deepEqual(Object.keys(res.body).sort(), INTENT_KEYS);
        visit = res.body;
        assert.equal(res.body.agentId, agent.id);
        assert.equal(res.body.name, "Agendar Visita");
        assert.equal(res.body.tag, "agendar-visita");
        assert.equal(res.body.webhookMethod, "POST");
        assert.equal(res.body.description, "When the customer wants a visit");
        assert.deepEqual(res.body.triggerOnTypes, ["TEXT", "AUDIO"]);
        assert.deepEqual(res.body.requiredFields, body("x").requiredFields);
        assert.equal(res.body.webhookUrl, "https://example.com/hooks/visit");
        const row = await app.deps.db.intent.findUniqueOrThrow({ where: { id: res.body.id } });
        assert.equal(row.tag, "agendar-visita");
      },
    );

    await t.step("tags: lowercase, spaces and underscores become hyphens", async () => {
      const cases: Array<[string, string]> = [
        ["book_a_call", "book-a-call"],
        ["  Falar   Com  Vendas ", "falar-com-vendas"],
        ["Pedido_Status Check", "pedido-status-check"],
        ["ORÇAMENTO", "orçamento"],
      ];
      for (const [name, tag] of cases) {
        const res = await c.post(base, body(name, { webhookMethod: "PUT", requiredFields: [] }));
        assertStatus(res, 201);
        assert.equal(res.body.tag, tag, name);
        assert.equal(res.body.webhookMethod, "PUT");
        assert.deepEqual(res.body.requiredFields, []);
      }
    });

    await t.step("duplicate tag on the same agent -> 409 DUPLICATE_INTENT, nothing created", async () => {
      const before = await snapshot(app);
      for (const name of ["Agendar Visita", "agendar_visita", "AGENDAR VISITA", "Book A Call"]) {
        assertProblem(await c.post(base, body(name)), 409, "DUPLICATE_INTENT");
      }
      assert.equal(await snapshot(app), before);
    });

    await t.step("the same tag on another agent is fine", async () => {
      const res = await c.post(`/api/agents/${otherAgent.id}/intents`, body("Agendar Visita"));
      assertStatus(res, 201);
      assert.equal(res.body.tag, "agendar-visita");
      assert.equal(res.body.agentId, otherAgent.id);
    });

    await t.step("list: the agent's intents in creation order", async () => {
      const res = await c.get(base);
      assertStatus(res, 200);
      assert.equal(res.body.nextCursor, null);
      assert.deepEqual(
        res.body.data.map((i: { tag: string }) => i.tag),
        ["agendar-visita", "book-a-call", "falar-com-vendas", "pedido-status-check", "orçamento"],
      );
      for (const i of res.body.data) assert.deepEqual(Object.keys(i).sort(), INTENT_KEYS);
      const other = await c.get(`/api/agents/${otherAgent.id}/intents`);
      assert.equal(other.body.data.length, 1);
      const paged = await c.get(`${base}?limit=2`);
      assert.equal(paged.body.data.length, 2);
      // An opaque keyset cursor, not the last row's id.
      assert.equal(typeof paged.body.nextCursor, "string");
      assert.notEqual(paged.body.nextCursor, paged.body.data[1].id);
    });

    await t.step("get one", async () => {
      const res = await c.get(`${base}/${visit.id}`);
      assertStatus(res, 200);
      assert.deepEqual(res.body, visit);
      assertProblem(await c.get(`${base}/unknown`), 404, "NOT_FOUND");
      // Under another agent of the same workspace: not found.
      assertProblem(await c.get(`/api/agents/${otherAgent.id}/intents/${visit.id}`), 404, "NOT_FOUND");
    });

    await t.step("patch: changes only the given fields; a rename changes the tag", async () => {
      const res = await c.patch(`${base}/${visit.id}`, {
        description: "New description",
        triggerOnTypes: ["IMAGE"],
      });
      assertStatus(res, 200);
      assert.equal(res.body.description, "New description");
      assert.deepEqual(res.body.triggerOnTypes, ["IMAGE"]);
      assert.equal(res.body.name, "Agendar Visita");
      assert.equal(res.body.webhookUrl, visit.webhookUrl);
      assert.deepEqual(res.body.requiredFields, visit.requiredFields);
      const renamed = await c.patch(`${base}/${visit.id}`, { name: "Marcar Visita", webhookMethod: "PATCH" });
      assertStatus(renamed, 200);
      assert.equal(renamed.body.tag, "marcar-visita");
      assert.equal(renamed.body.webhookMethod, "PATCH");
      assert.deepEqual((await c.get(`${base}/${visit.id}`)).body, renamed.body);
      // Renaming to a name with the same tag as itself is fine.
      assertStatus(await c.patch(`${base}/${visit.id}`, { name: "marcar_visita" }), 200);
      // An empty patch changes nothing.
      assertStatus(await c.patch(`${base}/${visit.id}`, {}), 200);
    });

    await t.step(
      "patch: a rename onto another intent's tag -> 409 DUPLICATE_INTENT, nothing changes",
      async () => {
        const before = await snapshot(app);
        assertProblem(await c.patch(`${base}/${visit.id}`, { name: "Book a Call" }), 409, "DUPLICATE_INTENT");
        assertProblem(
          await c.patch(`${base}/${visit.id}`, { name: "book_a_call", description: "x" }),
          409,
          "DUPLICATE_INTENT",
        );
        assert.equal(await snapshot(app), before);
      },
    );

    await t.step("private or non-http webhookUrl -> 400 VALIDATION_FAILED naming webhookUrl", async () => {
      const before = await snapshot(app);
      const urls = [
        "http://10.0.0.1/x",
        "http://169.254.169.254/latest",
        "http://192.168.1.10/hook",
        "http://172.16.5.4/hook",
        "http://0.0.0.0/hook",
        "http://[::ffff:10.0.0.1]/hook",
        "http://metadata.google.internal/computeMetadata/v1/",
        "http://[::1]/hook",
        "http://127.0.0.2/hook", // 127.0.0.1/32 is allow-listed, the rest of 127/8 is not
        "ftp://example.com/x",
        "not a url",
      ];
      for (const webhookUrl of urls) {
        const res = await c.post(base, body(`Private ${urls.indexOf(webhookUrl)}`, { webhookUrl }));
        assertProblem(res, 400, "VALIDATION_FAILED", ["webhookUrl"]);
        assertProblem(await c.patch(`${base}/${visit.id}`, { webhookUrl }), 400, "VALIDATION_FAILED", [
          "webhookUrl",
        ]);
      }
      assert.equal(await snapshot(app), before);
      // The allow-listed receiver address is accepted.
      const ok = await c.post(base, body("Local receiver", { webhookUrl: "http://127.0.0.1:9999/hook" }));
      assertStatus(ok, 201);
      assertStatus(await c.delete(`${base}/${ok.body.id}`), 204);
    });

    await t.step("bad enum values and shapes -> 400 naming the field", async () => {
      const before = await snapshot(app);
      const bad: Array<[Record<string, unknown>, string]> = [
        [{ triggerOnTypes: ["VIDEO"] }, "triggerOnTypes.0"],
        [{ triggerOnTypes: "TEXT" }, "triggerOnTypes"],
        [{ triggerOnTypes: [] }, "triggerOnTypes"],
        [{ webhookMethod: "GET" }, "webhookMethod"],
        [{ webhookMethod: "post" }, "webhookMethod"],
        [{ requiredFields: [{ name: "a b", type: "string", description: "x" }] }, "requiredFields.0.name"],
        [{ requiredFields: [{ name: "a", description: "x" }] }, "requiredFields.0.type"],
        [
          { requiredFields: [{ name: "a", type: "s", description: "x", extra: 1 }] },
          "requiredFields.0.extra",
        ],
        [{
          requiredFields: [{ name: "a", type: "s", description: "" }, {
            name: "a",
            type: "s",
            description: "",
          }],
        }, "requiredFields"],
        [{ name: "" }, "name"],
        [{ name: "<bad>" }, "name"],
        [{ name: "transferir" }, "name"],
        [{ description: 3 }, "description"],
        [{ color: "red" }, "color"],
      ];
      for (const [override, field] of bad) {
        const res = await c.post(base, body("Valid Name", override));
        assertProblem(res, 400, "VALIDATION_FAILED", [field]);
      }
      for (const field of ["name", "description", "triggerOnTypes", "requiredFields", "webhookUrl"]) {
        const rest: Record<string, unknown> = body("Missing field");
        delete rest[field];
        assertProblem(await c.post(base, rest), 400, "VALIDATION_FAILED", [field]);
      }
      assertProblem(
        await c.patch(`${base}/${visit.id}`, { triggerOnTypes: ["VIDEO"] }),
        400,
        "VALIDATION_FAILED",
        [
          "triggerOnTypes.0",
        ],
      );
      assertProblem(await c.patch(`${base}/${visit.id}`, { tag: "x" }), 400, "VALIDATION_FAILED", ["tag"]);
      assertProblem(await c.patch(`${base}/${visit.id}`, { name: null }), 400, "VALIDATION_FAILED", ["name"]);
      assert.equal(await snapshot(app), before);
    });

    await t.step("unknown agent or intent -> 404 on every path", async () => {
      const before = await snapshot(app);
      assertProblem(await c.get("/api/agents/unknown/intents"), 404, "NOT_FOUND");
      assertProblem(await c.post("/api/agents/unknown/intents", body("New")), 404, "NOT_FOUND");
      assertProblem(await c.patch(`${base}/unknown`, { description: "x" }), 404, "NOT_FOUND");
      assertProblem(await c.delete(`${base}/unknown`), 404, "NOT_FOUND");
      assertProblem(
        await c.patch(`/api/agents/${otherAgent.id}/intents/${visit.id}`, { description: "x" }),
        404,
        "NOT_FOUND",
      );
      assertProblem(await c.delete(`/api/agents/${otherAgent.id}/intents/${visit.id}`), 404, "NOT_FOUND");
      assert.equal(await snapshot(app), before);
    });

    await t.step("delete: 204, then 404; the tag is free again", async () => {
      assertStatus(await c.delete(`${base}/${visit.id}`), 204);
      assertProblem(await c.get(`${base}/${visit.id}`), 404, "NOT_FOUND");
      assertProblem(await c.delete(`${base}/${visit.id}`), 404, "NOT_FOUND");
      assert.equal(await app.deps.db.intent.count({ where: { id: visit.id } }), 0);
      assertStatus(await c.post(base, body("Marcar Visita")), 201);
      assert.equal((await c.get(base)).body.data.length, 5);
    });
  } finally {
    await ta.close();
  }
});
