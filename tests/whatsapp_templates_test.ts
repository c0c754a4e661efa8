/**
 * WhatsApp message templates (docs/behaviour.md "Templates"): a channel with a business account
 * (config.businessAccountId) has its templates synced from the Graph API, every page, when it is
 * created or its account changes, every hour, on demand (POST .../templates/sync, 409
 * NO_BUSINESS_ACCOUNT without an account, 502 TEMPLATE_SYNC_FAILED when Meta fails it), and from
 * Meta's `message_template_status_update` webhook, routed by the WABA id to every channel of that
 * account signed by the same app. Meta-shaped lists and webhooks (its template and webhook
 * references' examples).
 */
import assert from "node:assert/strict";
import { startTestApp } from "./_helpers/app.ts";
import { eventually } from "./_helpers/receiver.ts";
import { graphError } from "./_helpers/conversations.ts";
import { createWhatsAppChannel, postSigned } from "./_helpers/whatsapp.ts";
import { metaTemplate, startTemplateGraph } from "./_helpers/templates.ts";
import {
  queueEveryTemplateSync,
  TEMPLATE_SWEEP_CRON,
  TEMPLATE_SWEEP_QUEUE,
} from "../src/jobs/workers/templates.ts";

const WABA = "102290129340398";
const TEMPLATE_KEYS = ["category", "components", "language", "name", "parameterFormat", "status"];

/** Meta's template status webhook (its "message_template_status_update" reference example). */
const statusUpdate = (waba: string, name: string, event: string, language = "en-US") => ({
  entry: [{
    id: waba,
    time: 1674864290,
    changes: [{
      value: {
        event,
        message_template_id: 546151681022937,
        message_template_name: name,
        message_template_language: language,
        reason: "NONE",
      },
      field: "message_template_status_update",
    }],
  }],
  object: "whatsapp_business_account",
});

Deno.test("WhatsApp templates: synced every page, listed, on demand, hourly and from Meta's status webhook", async (t) => {
  // Three templates, two a page: the sync must follow paging.next to the second page.
  const graph = startTemplateGraph([metaTemplate(1), metaTemplate(2), metaTemplate(3)], 2);
  const ta = await startTestApp({ WHATSAPP_GRAPH_URL: graph.url("/v21.0") });
  const db = ta.app.deps.db;
  try {
    const { workspaceId, owner } = await ta.seed.workspace();
    const agent = await ta.seed.agent(owner.client);
    const names = async (channelId: string) =>
      (await db.whatsAppTemplate.findMany({ where: { channelId }, orderBy: { name: "asc" } }))
        .map((row) => `${row.name}:${row.status}`);
    let channelId = "";

    await t.step(
      "a channel created with its WABA id: every page synced, listed in REST and GraphQL",
      async () => {
        const created = await createWhatsAppChannel(owner.client, agent.id, { businessAccountId: WABA });
        assert.equal(created.businessAccountId, WABA);
        channelId = created.id;
        await eventually(async () => (await names(channelId)).length === 3 || undefined);
        assert.equal(graph.listCalls.length, 2, "two pages");
        assert.equal(graph.listCalls[0].pathname, `/v21.0/${WABA}/message_templates`);
        assert.equal(graph.listCalls[1].searchParams.get("after"), btoa("2"));
        assert.equal(graph.calls[0].headers.get("authorization"), "Bearer test-access-token");

        const list = await owner.client.get(`/api/channels/${channelId}/templates`);
        assert.equal(list.status, 200);
        assert.deepEqual(Object.keys(list.body), ["data"]);
        assert.deepEqual(list.body.data.map((row: { name: string }) => row.name), [
          "seasonal_promotion_1",
          "seasonal_promotion_2",
          "seasonal_promotion_3",
        ]);
        assert.deepEqual(Object.keys(list.body.data[0]).sort(), TEMPLATE_KEYS);
        const meta = metaTemplate(1);
        assert.deepEqual(list.body.data[0], {
          name: meta.name,
          language: "en_US",
          category: "MARKETING",
          status: "APPROVED",
          components: meta.components,
          parameterFormat: "POSITIONAL",
        });
        const gql = await owner.client.graphql(
          `query ($id: ID!) {
            templates(channelId: $id, first: 10) {
              edges { node { name language category status components parameterFormat } }
            }
          }`,
          { id: channelId },
        );
        assert.deepEqual(
          gql.body.data.templates.edges.map((e: { node: unknown }) => e.node),
          list.body.data,
          "GraphQL lists what REST lists",
        );
      },
    );

    await t.step(
      "on demand: the answer is the new list (a removed template goes, a new status shows)",
      async () => {
        graph.templates = [metaTemplate(1, { status: "PAUSED" }), metaTemplate(3), metaTemplate(4)];
        const synced = await owner.client.post(`/api/channels/${channelId}/templates/sync`);
        assert.equal(synced.status, 200);
        assert.deepEqual(
          synced.body.data.map((row: { name: string; status: string }) => `${row.name}:${row.status}`),
          ["seasonal_promotion_1:PAUSED", "seasonal_promotion_3:APPROVED", "seasonal_promotion_4:APPROVED"],
        );
        assert.deepEqual(Object.keys(synced.body.data[0]).sort(), TEMPLATE_KEYS);
        assert.deepEqual(await names(channelId), [
          "seasonal_promotion_1:PAUSED",
          "seasonal_promotion_3:APPROVED",
          "seasonal_promotion_4:APPROVED",
        ]);
      },
    );

    await t.step("Meta's failure: 502 TEMPLATE_SYNC_FAILED with its reason, nothing changed", async () => {
      const before = await names(channelId);
      const calls = graph.calls.length;
      // The stand-in refuses its next list call as Meta does an expired token.
      graph.refuseNext = graphError(401, 190, "Error validating access token: Session has expired");
      const refused = await owner.client.post(`/api/channels/${channelId}/templates/sync`);
      assert.equal(refused.status, 502);
      assert.equal(refused.body.code, "TEMPLATE_SYNC_FAILED");
      assert.match(refused.body.detail, /Session has expired/);
      assert.ok(!JSON.stringify(refused.body).includes("test-access-token"));
      assert.equal(graph.calls.length, calls + 1);
      assert.deepEqual(await names(channelId), before);
    });

    await t.step("without a business account: 409 NO_BUSINESS_ACCOUNT, an empty list", async () => {
      const plain = { body: await createWhatsAppChannel(owner.client, agent.id) };
      const refused = await owner.client.post(`/api/channels/${plain.body.id}/templates/sync`);
      assert.equal(refused.status, 409);
      assert.equal(refused.body.code, "NO_BUSINESS_ACCOUNT");
      assert.deepEqual((await owner.client.get(`/api/channels/${plain.body.id}/templates`)).body, {
        data: [],
      });
      const api = await owner.client.post(`/api/agents/${agent.id}/channels`, { type: "API", label: "App" });
      assert.equal(
        (await owner.client.post(`/api/channels/${api.body.id}/templates/sync`)).body.code,
        "NO_BUSINESS_ACCOUNT",
      );
    });

    await t.step("Meta's status webhook, routed by the WABA id to every channel of that app", async () => {
      // A second number of the same account and app, and the same account in another workspace
      // under another app: the post is signed by the first app only.
      const sibling = {
        body: await createWhatsAppChannel(owner.client, agent.id, { businessAccountId: WABA }),
      };
      const other = await ta.seed.workspace("Other");
      const otherAgent = await ta.seed.agent(other.owner.client);
      const stranger = {
        body: await createWhatsAppChannel(other.owner.client, otherAgent.id, {
          businessAccountId: WABA,
          appSecret: "another-app-secret-42",
        }),
      };
      for (const id of [sibling.body.id, stranger.body.id]) {
        await eventually(async () => (await names(id)).length === 3 || undefined);
      }
      // Meta writes the language with a hyphen here (en-US), its list with an underscore (en_US).
      const posted = await postSigned(
        ta.anon,
        channelId,
        statusUpdate(WABA, "seasonal_promotion_3", "DISABLED"),
      );
      assert.equal(posted.status, 200);
      for (const id of [channelId, sibling.body.id]) {
        await eventually(async () =>
          (await names(id)).includes("seasonal_promotion_3:DISABLED") || undefined
        );
      }
      assert.ok(
        (await names(stranger.body.id)).includes("seasonal_promotion_3:APPROVED"),
        "another app's channel",
      );

      // A template neither channel knows yet: both sync in full.
      graph.templates = [...graph.templates, metaTemplate(5)];
      const calls = graph.listCalls.length;
      assert.equal(
        (await postSigned(ta.anon, channelId, statusUpdate(WABA, "seasonal_promotion_5", "APPROVED"))).status,
        200,
      );
      for (const id of [channelId, sibling.body.id]) {
        await eventually(async () =>
          (await names(id)).includes("seasonal_promotion_5:APPROVED") || undefined
        );
      }
      assert.ok(graph.listCalls.length >= calls + 2);
      assert.ok(!(await names(stranger.body.id)).includes("seasonal_promotion_5:APPROVED"));
      // Signed by another app: 401, nothing changed.
      const forged = await postSigned(
        ta.anon,
        channelId,
        statusUpdate(WABA, "seasonal_promotion_1", "APPROVED"),
        "x",
      );
      assert.equal(forged.status, 401);
      assert.ok((await names(channelId)).includes("seasonal_promotion_1:PAUSED"));
    });

    await t.step(
      "every hour: a pg-boss schedule queues a sync of every channel with an account",
      async () => {
        const [schedule] = await db.$queryRaw<Array<{ cron: string }>>`
        SELECT cron FROM pgboss.schedule WHERE name = ${TEMPLATE_SWEEP_QUEUE}`;
        assert.equal(schedule?.cron, TEMPLATE_SWEEP_CRON);
        graph.templates = [metaTemplate(1), metaTemplate(6)];
        assert.equal(await queueEveryTemplateSync(ta.app.deps), 3);
        await eventually(async () =>
          (await names(channelId)).join() === "seasonal_promotion_1:APPROVED,seasonal_promotion_6:APPROVED" ||
          undefined
        );
      },
    );

    await t.step("a new WABA id syncs again; none removes the templates", async () => {
      graph.templates = [metaTemplate(7)];
      const changed = await owner.client.patch(`/api/agents/${agent.id}/channels/${channelId}`, {
        config: { businessAccountId: "987654321" },
      });
      assert.equal(changed.status, 200);
      assert.equal(changed.body.businessAccountId, "987654321");
      await eventually(async () =>
        (await names(channelId)).join() === "seasonal_promotion_7:APPROVED" || undefined
      );
      assert.ok(graph.listCalls.some((url) => url.pathname === "/v21.0/987654321/message_templates"));
      const removed = await owner.client.patch(`/api/agents/${agent.id}/channels/${channelId}`, {
        config: { businessAccountId: null },
      });
      assert.equal(removed.status, 200);
      assert.deepEqual(await names(channelId), []);
    });

    await t.step(
      "roles and workspaces: a VIEWER lists but cannot sync; another workspace gets 404",
      async () => {
        const viewer = await ta.seed.member(workspaceId, "VIEWER");
        assert.equal((await viewer.client.get(`/api/channels/${channelId}/templates`)).status, 200);
        assert.equal((await viewer.client.post(`/api/channels/${channelId}/templates/sync`)).status, 403);
        const other = await ta.seed.workspace("Elsewhere");
        assert.equal((await other.owner.client.get(`/api/channels/${channelId}/templates`)).status, 404);
        assert.equal(
          (await other.owner.client.post(`/api/channels/${channelId}/templates/sync`)).status,
          404,
        );
      },
    );
  } finally {
    await ta.close();
    await graph.close();
  }
});
