/**
 * Agents over REST (docs/behaviour.md "Agents, prompts and intents"): list, create, read, whole
 * replacement, status, prompt and its versions, revert, delete with cascade, pagination.
 */
import assert from "node:assert/strict";
import { startTestApp } from "./_helpers/app.ts";
import { assertProblem, assertStatus, snapshot } from "./_helpers/problem.ts";

const FLAG_DEFAULTS = {
  enabledHumanTransfer: true,
  enabledReminder: true,
  splitMessages: true,
  enabledEmoji: true,
  signMessages: false,
  enabledVision: false,
  messageGroupingTime: "MEDIUM",
  maxDailyMessages: null,
  autoCloseMinutes: 60,
};
const AGENT_KEYS = [
  "id",
  "name",
  "status",
  "template",
  "model",
  "jobName",
  "jobSite",
  "jobDescription",
  "trainingContext",
  "systemPrompt",
  "temperature",
  "reminderTemplate",
  ...Object.keys(FLAG_DEFAULTS),
  "createdAt",
  "updatedAt",
].sort();
const VERSION_KEYS = [
  "agentId",
  "authorLabel",
  "authorUserId",
  "createdAt",
  "id",
  "rationale",
  "revertedFrom",
  "systemPrompt",
];
const INTENT = {
  description: "d",
  triggerOnTypes: ["TEXT"],
  requiredFields: [],
  webhookUrl: "https://example.com/intent",
};

Deno.test("agents", async (t) => {
  const ta = await startTestApp();
  const { app, seed } = ta;
  const db = app.deps.db;
  try {
    const { workspaceId, owner } = await seed.workspace();
    const c = owner.client;
    let agent: Record<string, unknown> & { id: string } = { id: "" };

    await t.step("list of an empty workspace", async () => {
      const res = await c.get("/api/agents");
      assertStatus(res, 200);
      assert.deepEqual(res.body, { data: [], nextCursor: null });
    });

    await t.step(
      "create with a name only: 201, ACTIVE, defaults, a generated prompt naming the agent",
      async () => {
        const res = await c.post("/api/agents", { name: "Bia" });
        assertStatus(res, 201);
        agent = res.body;
        assert.deepEqual(Object.keys(res.body).sort(), AGENT_KEYS);
        assert.equal(res.body.name, "Bia");
        assert.equal(res.body.status, "ACTIVE");
        assert.equal(res.body.template, "SUPORTE");
        assert.equal(res.body.model, "gpt-4o-mini");
        for (
          const k of [
            "jobName",
            "jobSite",
            "jobDescription",
            "trainingContext",
            "temperature",
            "reminderTemplate",
          ]
        ) {
          assert.equal(res.body[k], null, k);
        }
        for (const [k, v] of Object.entries(FLAG_DEFAULTS)) assert.equal(res.body[k], v, k);
        assert.equal(typeof res.body.systemPrompt, "string");
        assert.ok(res.body.systemPrompt.includes("Bia"), res.body.systemPrompt);
        assert.match(res.body.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
        const row = await db.agent.findUniqueOrThrow({ where: { id: res.body.id } });
        assert.equal(row.workspaceId, workspaceId);
        // Creating an agent records no prompt version.
        assert.deepEqual((await c.get(`/api/agents/${res.body.id}/prompt-versions`)).body, {
          data: [],
          nextCursor: null,
        });
      },
    );

    await t.step("create with every profile field: stored, and the prompt uses them", async () => {
      const res = await c.post("/api/agents", {
        name: "Carla",
        template: "SUPORTE",
        jobName: "Padaria Sol",
        jobSite: "https://padariasol.example.com",
        jobDescription: "Pães artesanais",
        trainingContext: "Abrimos às 7h.",
        model: "gpt-4.1",
      });
      assertStatus(res, 201);
      assert.equal(res.body.model, "gpt-4.1");
      assert.equal(res.body.jobSite, "https://padariasol.example.com");
      for (
        const s of [
          "Carla",
          "Padaria Sol",
          "https://padariasol.example.com",
          "Pães artesanais",
          "Abrimos às 7h.",
        ]
      ) {
        assert.ok(res.body.systemPrompt.includes(s), s);
      }
    });

    await t.step("create from SUPPORT: the same attendant in English, the template kept by PUT", async () => {
      const res = await c.post("/api/agents", {
        name: "Sam",
        template: "SUPPORT",
        jobName: "Sunrise Bakery",
        jobSite: "https://sunrise.example.com",
        jobDescription: "Sourdough bread",
        trainingContext: "We open at 7am.",
      });
      assertStatus(res, 201);
      assert.equal(res.body.template, "SUPPORT");
      assert.equal(
        res.body.systemPrompt,
        [
          "You are Sam, a customer support attendant of Sunrise Bakery.",
          "Company website: https://sunrise.example.com.",
          "About the company: Sourdough bread",
          "",
          "How to help:",
          "- Answer politely, clearly and to the point, in short messages.",
          "- Use only the information in this prompt and in the training context; do not make anything up.",
          "- When you cannot solve something, say you will hand the conversation to a human attendant.",
          "",
          "Training context:",
          "We open at 7am.",
        ].join("\n"),
      );
      const gql = await c.graphql(`query($id: ID!) { agent(id: $id) { template } }`, { id: res.body.id });
      assert.deepEqual(gql.body, { data: { agent: { template: "SUPPORT" } } });
      const put = await c.put(`/api/agents/${res.body.id}`, { name: "Sam", template: "SUPPORT" });
      assertStatus(put, 200);
      assert.equal(put.body.template, "SUPPORT");
      assertStatus(await c.delete(`/api/agents/${res.body.id}`), 204);
    });

    await t.step("create with flags and temperature", async () => {
      const flags = {
        enabledHumanTransfer: false,
        enabledReminder: false,
        splitMessages: false,
        enabledEmoji: false,
        signMessages: true,
        enabledVision: true,
        messageGroupingTime: "SLOW",
        maxDailyMessages: 20,
        autoCloseMinutes: 15,
        temperature: 0.4,
      };
      const res = await c.post("/api/agents", { name: "Dora", ...flags });
      assertStatus(res, 201);
      for (const [k, v] of Object.entries(flags)) assert.equal(res.body[k], v, k);
      assertStatus(await c.delete(`/api/agents/${res.body.id}`), 204);
    });

    await t.step(
      "list: exactly id, name, status, template, model, _count { conversations, intents, numbers }",
      async () => {
        for (const name of ["One", "Two"]) {
          assertStatus(await c.post(`/api/agents/${agent.id}/intents`, { name, ...INTENT }), 201);
        }
        const channel = await db.channel.create({ data: { workspaceId, agentId: agent.id, label: "Main" } });
        const contact = await db.contact.create({
          data: { workspaceId, externalId: "5511999990000", name: "Zé" },
        });
        await db.conversation.create({
          data: { workspaceId, agentId: agent.id, channelId: channel.id, contactId: contact.id },
        });
        const res = await c.get("/api/agents");
        assertStatus(res, 200);
        assert.deepEqual(Object.keys(res.body).sort(), ["data", "nextCursor"]);
        assert.equal(res.body.nextCursor, null);
        assert.equal(res.body.data.length, 2);
        for (const item of res.body.data) {
          assert.deepEqual(Object.keys(item).sort(), ["_count", "id", "model", "name", "status", "template"]);
        }
        assert.deepEqual(res.body.data[0], {
          id: agent.id,
          name: "Bia",
          status: "ACTIVE",
          template: "SUPORTE",
          model: "gpt-4o-mini",
          _count: { conversations: 1, intents: 2, numbers: 1 },
        });
        assert.deepEqual(res.body.data[1]._count, { conversations: 0, intents: 0, numbers: 0 });
        assert.equal(res.body.data[1].name, "Carla");
      },
    );

    await t.step("GET one: every field", async () => {
      const res = await c.get(`/api/agents/${agent.id}`);
      assertStatus(res, 200);
      assert.deepEqual(Object.keys(res.body).sort(), AGENT_KEYS);
      assert.deepEqual(res.body, agent);
      assertProblem(await c.get("/api/agents/unknown"), 404, "NOT_FOUND");
    });

    await t.step(
      "PUT: a body read from GET and sent back unchanged is accepted and changes nothing",
      async () => {
        const got = (await c.get(`/api/agents/${agent.id}`)).body;
        const res = await c.put(`/api/agents/${agent.id}`, got);
        assertStatus(res, 200);
        const { updatedAt: _a, ...after } = res.body;
        const { updatedAt: _b, ...before } = got;
        assert.deepEqual(after, before);
      },
    );

    await t.step("PUT: whole replacement with every field", async () => {
      const full = {
        name: "Bia 2",
        template: "SUPORTE",
        model: "gpt-4.1-mini",
        jobName: "Loja",
        jobSite: "https://loja.example.com",
        jobDescription: "Desc",
        trainingContext: "Ctx",
        temperature: 1.2,
        enabledHumanTransfer: false,
        enabledReminder: false,
        splitMessages: false,
        enabledEmoji: false,
        signMessages: true,
        enabledVision: true,
        messageGroupingTime: "FAST",
        maxDailyMessages: 5,
        autoCloseMinutes: 120,
      };
      const res = await c.put(`/api/agents/${agent.id}`, full);
      assertStatus(res, 200);
      assert.deepEqual(Object.keys(res.body).sort(), AGENT_KEYS);
      for (const [k, v] of Object.entries(full)) assert.equal(res.body[k], v, k);
      assert.equal(res.body.status, "ACTIVE");
      assert.equal(res.body.systemPrompt, agent.systemPrompt); // the prompt has its own endpoint
      assert.deepEqual((await c.get(`/api/agents/${agent.id}`)).body, res.body);
    });

    await t.step("PUT: omitted optional fields become null, omitted flags return to defaults", async () => {
      const res = await c.put(`/api/agents/${agent.id}`, { name: "Bia 3" });
      assertStatus(res, 200);
      assert.equal(res.body.name, "Bia 3");
      assert.equal(res.body.model, "gpt-4o-mini");
      assert.equal(res.body.template, "SUPORTE");
      for (const k of ["jobName", "jobSite", "jobDescription", "trainingContext", "temperature"]) {
        assert.equal(res.body[k], null, k);
      }
      for (const [k, v] of Object.entries(FLAG_DEFAULTS)) assert.equal(res.body[k], v, k);
      assert.deepEqual((await c.get(`/api/agents/${agent.id}`)).body, res.body);
    });

    await t.step("PUT: read-only fields (status, systemPrompt, id) are ignored", async () => {
      const res = await c.put(`/api/agents/${agent.id}`, {
        name: "Bia",
        status: "PAUSED",
        systemPrompt: "ignored",
        id: "other",
        createdAt: "2000-01-01T00:00:00.000Z",
      });
      assertStatus(res, 200);
      assert.equal(res.body.id, agent.id);
      assert.equal(res.body.status, "ACTIVE");
      assert.equal(res.body.systemPrompt, agent.systemPrompt);
      assert.equal(res.body.createdAt, agent.createdAt);
    });

    await t.step("PUT: name missing or blank -> 400 and nothing changes", async () => {
      const before = await snapshot(app);
      const got = (await c.get(`/api/agents/${agent.id}`)).body;
      const { name: _, ...noName } = got;
      assertProblem(await c.put(`/api/agents/${agent.id}`, noName), 400, "VALIDATION_FAILED", ["name"]);
      assertProblem(await c.put(`/api/agents/${agent.id}`, { ...got, name: "" }), 400, "VALIDATION_FAILED", [
        "name",
      ]);
      assertProblem(
        await c.put(`/api/agents/${agent.id}`, { ...got, name: null }),
        400,
        "VALIDATION_FAILED",
        ["name"],
      );
      assertProblem(await c.put(`/api/agents/${agent.id}`, {}), 400, "VALIDATION_FAILED", ["name"]);
      assertProblem(
        await c.put(`/api/agents/${agent.id}`, { name: "X", temperature: 2.5 }),
        400,
        "VALIDATION_FAILED",
        [
          "temperature",
        ],
      );
      assertProblem(
        await c.put(`/api/agents/${agent.id}`, { name: "X", jobSite: "javascript:alert(1)" }),
        400,
        "VALIDATION_FAILED",
        ["jobSite"],
      );
      assertProblem(await c.put("/api/agents/unknown", { name: "X" }), 404, "NOT_FOUND");
      assert.equal(await snapshot(app), before);
    });

    await t.step("PATCH status: PAUSED and back to ACTIVE; anything else -> 400", async () => {
      const paused = await c.patch(`/api/agents/${agent.id}/status`, { status: "PAUSED" });
      assertStatus(paused, 200);
      assert.deepEqual(Object.keys(paused.body).sort(), AGENT_KEYS);
      assert.equal(paused.body.status, "PAUSED");
      assert.equal((await c.get(`/api/agents/${agent.id}`)).body.status, "PAUSED");
      // PUT keeps the status.
      assert.equal((await c.put(`/api/agents/${agent.id}`, { name: "Bia" })).body.status, "PAUSED");
      const before = await snapshot(app);
      for (
        const body of [{ status: "DELETED" }, { status: "paused" }, { status: null }, {}, {
          status: "ACTIVE",
          x: 1,
        }]
      ) {
        assertProblem(await c.patch(`/api/agents/${agent.id}/status`, body), 400, "VALIDATION_FAILED");
      }
      assertProblem(await c.patch("/api/agents/unknown/status", { status: "ACTIVE" }), 404, "NOT_FOUND");
      assert.equal(await snapshot(app), before);
      const active = await c.patch(`/api/agents/${agent.id}/status`, { status: "ACTIVE" });
      assertStatus(active, 200);
      assert.equal(active.body.status, "ACTIVE");
    });

    const versions: string[] = [];
    await t.step("PUT prompt: sets the prompt and records a PromptVersion (newest first)", async () => {
      for (
        const [prompt, rationale] of [["Prompt one", "first"], ["Prompt two", "second"], ["Prompt three", ""]]
      ) {
        const res = await c.put(`/api/agents/${agent.id}/prompt`, { systemPrompt: prompt, rationale });
        assertStatus(res, 200);
        assert.equal(res.body.systemPrompt, prompt);
        assert.deepEqual(Object.keys(res.body).sort(), AGENT_KEYS);
      }
      assert.equal((await c.get(`/api/agents/${agent.id}`)).body.systemPrompt, "Prompt three");
      const res = await c.get(`/api/agents/${agent.id}/prompt-versions`);
      assertStatus(res, 200);
      assert.equal(res.body.nextCursor, null);
      assert.deepEqual(
        res.body.data.map((v: { systemPrompt: string; rationale: string }) => [v.systemPrompt, v.rationale]),
        [["Prompt three", ""], ["Prompt two", "second"], ["Prompt one", "first"]],
      );
      for (const v of res.body.data) {
        assert.deepEqual(Object.keys(v).sort(), VERSION_KEYS);
        assert.equal(v.agentId, agent.id);
        assert.equal(v.authorUserId, owner.userId);
        assert.equal(v.authorLabel, owner.email);
        assert.equal(v.revertedFrom, null);
      }
      versions.push(...res.body.data.map((v: { id: string }) => v.id));
      assert.equal(await db.promptVersion.count({ where: { agentId: agent.id } }), 3);
    });

    await t.step("PUT prompt: bad bodies -> 400, nothing recorded", async () => {
      const before = await snapshot(app);
      const url = `/api/agents/${agent.id}/prompt`;
      assertProblem(await c.put(url, { systemPrompt: "x" }), 400, "VALIDATION_FAILED", ["rationale"]);
      assertProblem(await c.put(url, { rationale: "x" }), 400, "VALIDATION_FAILED", ["systemPrompt"]);
      assertProblem(await c.put(url, { systemPrompt: "  ", rationale: "x" }), 400, "VALIDATION_FAILED", [
        "systemPrompt",
      ]);
      assertProblem(await c.put(url, { systemPrompt: 1, rationale: "x" }), 400, "VALIDATION_FAILED", [
        "systemPrompt",
      ]);
      assertProblem(
        await c.put("/api/agents/unknown/prompt", { systemPrompt: "x", rationale: "x" }),
        404,
        "NOT_FOUND",
      );
      assert.equal(await snapshot(app), before);
    });

    await t.step("prompt versions: paginated newest first", async () => {
      const page1 = await c.get(`/api/agents/${agent.id}/prompt-versions?limit=2`);
      assert.deepEqual(page1.body.data.map((v: { id: string }) => v.id), versions.slice(0, 2));
      assert.ok(page1.body.nextCursor);
      const page2 = await c.get(
        `/api/agents/${agent.id}/prompt-versions?limit=2&cursor=${page1.body.nextCursor}`,
      );
      assert.deepEqual(page2.body, { data: [page2.body.data[0]], nextCursor: null });
      assert.equal(page2.body.data[0].id, versions[2]);
    });

    await t.step("revert: a new version restoring the old prompt", async () => {
      const oldest = versions[2]; // "Prompt one"
      const res = await c.post(`/api/agents/${agent.id}/prompt-versions/${oldest}/revert`);
      assertStatus(res, 200);
      assert.equal(res.body.systemPrompt, "Prompt one");
      assert.equal((await c.get(`/api/agents/${agent.id}`)).body.systemPrompt, "Prompt one");
      const list = (await c.get(`/api/agents/${agent.id}/prompt-versions`)).body.data;
      assert.equal(list.length, 4);
      assert.equal(list[0].systemPrompt, "Prompt one");
      assert.equal(list[0].revertedFrom, oldest);
      assert.equal(list[0].rationale, `Reverted to version ${oldest}`);
      assert.deepEqual(list.slice(1).map((v: { id: string }) => v.id), versions);
      // With a rationale.
      const again = await c.post(`/api/agents/${agent.id}/prompt-versions/${versions[0]}/revert`, {
        rationale: "back to three",
      });
      assertStatus(again, 200);
      assert.equal(again.body.systemPrompt, "Prompt three");
      const top = (await c.get(`/api/agents/${agent.id}/prompt-versions?limit=1`)).body;
      assert.equal(top.data[0].rationale, "back to three");
      assert.equal(top.data[0].revertedFrom, versions[0]);
      assert.equal(typeof top.nextCursor, "string");
    });

    await t.step(
      "revert: unknown version, another agent's version, bad body -> 404/400, nothing changes",
      async () => {
        const other = await seed.agent(c, { name: "Other" });
        await c.put(`/api/agents/${other.id}/prompt`, { systemPrompt: "Other prompt", rationale: "r" });
        const otherVersion = (await c.get(`/api/agents/${other.id}/prompt-versions`)).body.data[0].id;
        const before = await snapshot(app);
        assertProblem(
          await c.post(`/api/agents/${agent.id}/prompt-versions/unknown/revert`),
          404,
          "NOT_FOUND",
        );
        assertProblem(
          await c.post(`/api/agents/${agent.id}/prompt-versions/${otherVersion}/revert`),
          404,
          "NOT_FOUND",
        );
        assertProblem(
          await c.post(`/api/agents/unknown/prompt-versions/${versions[0]}/revert`),
          404,
          "NOT_FOUND",
        );
        assertProblem(
          await c.post(`/api/agents/${agent.id}/prompt-versions/${versions[0]}/revert`, { rationale: 5 }),
          400,
          "VALIDATION_FAILED",
          ["rationale"],
        );
        assertProblem(
          await c.post(`/api/agents/${agent.id}/prompt-versions/${versions[0]}/revert`, { note: "x" }),
          400,
          "VALIDATION_FAILED",
          ["note"],
        );
        assert.equal(await snapshot(app), before);
        assertProblem(await c.get("/api/agents/unknown/prompt-versions"), 404, "NOT_FOUND");
      },
    );

    await t.step(
      "DELETE: 204, then 404; intents, webhooks, versions, channels, conversations go too",
      async () => {
        assertStatus(
          await c.post(`/api/agents/${agent.id}/webhooks`, {
            event: "message.sent",
            url: "https://example.com/w",
          }),
          201,
        );
        const where = { where: { agentId: agent.id } };
        assert.equal(await db.intent.count(where), 2);
        assert.equal(await db.eventWebhook.count(where), 1);
        assert.ok(await db.promptVersion.count(where) > 0);
        assert.equal(await db.conversation.count(where), 1);
        const others = await db.agent.count({ where: { NOT: { id: agent.id } } });
        const res = await c.delete(`/api/agents/${agent.id}`);
        assertStatus(res, 204);
        assertProblem(await c.get(`/api/agents/${agent.id}`), 404, "NOT_FOUND");
        assertProblem(await c.get(`/api/agents/${agent.id}/intents`), 404, "NOT_FOUND");
        assertProblem(await c.delete(`/api/agents/${agent.id}`), 404, "NOT_FOUND");
        for (const n of [db.intent, db.eventWebhook, db.promptVersion, db.conversation, db.channel]) {
          // deno-lint-ignore no-explicit-any
          assert.equal(await (n as any).count(where), 0);
        }
        assert.equal(await db.agent.count(), others);
        assert.equal(await db.contact.count(), 1); // contacts belong to the workspace, not the agent
        assertProblem(await c.delete("/api/agents/unknown"), 404, "NOT_FOUND");
      },
    );

    await t.step("pagination: limit and cursor walk every agent once, in creation order", async () => {
      const ws = await seed.workspace("Paged");
      const created: string[] = [];
      for (let i = 0; i < 7; i++) created.push((await seed.agent(ws.owner.client, { name: `A${i}` })).id);
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const q: string = cursor ? `?limit=3&cursor=${cursor}` : "?limit=3";
        const res = await ws.owner.client.get(`/api/agents${q}`);
        assertStatus(res, 200);
        assert.ok(res.body.data.length <= 3);
        seen.push(...res.body.data.map((a: { id: string }) => a.id));
        cursor = res.body.nextCursor;
        // Opaque (keyset of the last row), not its id.
        if (cursor) assert.notEqual(cursor, res.body.data[res.body.data.length - 1].id);
        pages++;
      } while (cursor && pages < 10);
      assert.equal(pages, 3);
      assert.deepEqual(seen, created);
      const exact = await ws.owner.client.get("/api/agents?limit=7");
      assert.equal(exact.body.data.length, 7);
      assert.equal(exact.body.nextCursor, null);
      assert.equal((await ws.owner.client.get("/api/agents?limit=500")).status, 200);
      assert.equal((await ws.owner.client.get("/api/agents")).body.data.length, 7);
    });

    await t.step("pagination: limit=0, 1000, -1, 1.5 or text -> 400", async () => {
      for (const q of ["limit=0", "limit=1000", "limit=501", "limit=-1", "limit=1.5", "limit=abc"]) {
        assertProblem(await c.get(`/api/agents?${q}`), 400, "VALIDATION_FAILED", ["limit"]);
      }
      assertProblem(await c.get(`/api/agents?cursor=${"x".repeat(65)}`), 400, "BAD_CURSOR");
    });
  } finally {
    await ta.close();
  }
});
