/**
 * What the workspace's messages cost (docs/behaviour.md "What WhatsApp messages cost"): Meta's
 * status webhooks (its documented `statuses[]` shape, with `pricing: { billable, pricing_model:
 * "PMP", type, category }`) move outgoing messages to DELIVERED or READ with their pricing, and
 * GET /api/usage and GraphQL `workspace { usage(from, to) }` count exactly those per channel, UTC
 * day, category and billable: not a message only sent, not a FAILED one, not a customer's, nothing
 * outside [from, to), nothing of another workspace. OWNER, MANAGER and API tokens read it; AGENT and
 * VIEWER get 403; a bad or reversed range, or one over 366 days, is 400 and changes nothing. The
 * count uses the delivered messages' partial index.
 */
import assert from "node:assert/strict";
import { Client, type Reply, startTestApp } from "./_helpers/app.ts";
import { ManualClock } from "./_helpers/clock.ts";
import { eventually } from "./_helpers/receiver.ts";
import { assertProblem, snapshot } from "./_helpers/problem.ts";
import { gqlOk, gqlRefused } from "./_helpers/roles.ts";
import {
  createWhatsAppChannel,
  customerWrites,
  envelope,
  postSigned,
  type TestChannel,
} from "./_helpers/whatsapp.ts";
import { usageCounts } from "../src/usage/sql.ts";

type Pricing = { category: string; billable: boolean };

/** One entry of Meta's `statuses[]` (status messages webhook reference), with its pricing when given. */
function status(wamid: string, state: "sent" | "delivered" | "read" | "failed", pricing?: Pricing) {
  return {
    id: wamid,
    status: state,
    timestamp: "1762128000",
    recipient_id: "16505551234",
    ...(pricing
      ? {
        pricing: {
          billable: pricing.billable,
          pricing_model: "PMP",
          type: pricing.billable ? "regular" : "free_customer_service",
          category: pricing.category,
        },
      }
      : {}),
    ...(state === "failed"
      ? {
        errors: [{
          code: 131026,
          title: "Message undeliverable",
          message: "Message undeliverable",
          error_data: { details: "Message Undeliverable." },
        }],
      }
      : {}),
  };
}

const UTILITY = { category: "utility", billable: true };
const MARKETING = { category: "marketing", billable: true };
const SERVICE = { category: "service", billable: false };
const AUTHENTICATION = { category: "authentication", billable: true };

/** An outgoing message as a send stores it (SENT, with Meta's wamid), created at `at`. */
interface Outgoing {
  wamid: string;
  at: string;
  statuses: ReturnType<typeof status>[];
  /** The status it ends in once Meta's statuses are applied. */
  ends: "SENT" | "DELIVERED" | "READ" | "FAILED";
}

const USAGE_QUERY = `query ($from: String, $to: String) {
  workspace { usage(from: $from, to: $to) { from to data { channelId day category billable messages } } }
}`;

Deno.test("usage counts delivered messages per channel, UTC day, category and billable", async (t) => {
  // Today is 2 November 2026 (UTC) for the defaults.
  const clock = new ManualClock(new Date("2026-11-02T15:00:00.000Z"));
  const ta = await startTestApp({}, { clock });
  const db = ta.app.deps.db;
  try {
    const { workspaceId, owner } = await ta.seed.workspace("Acme");
    const agent = await ta.seed.agent(owner.client);
    const sales = await createWhatsAppChannel(owner.client, agent.id);
    const support = await createWhatsAppChannel(owner.client, agent.id);
    const elsewhere = await ta.seed.workspace("Elsewhere");
    const otherAgent = await ta.seed.agent(elsewhere.owner.client);
    const theirs = await createWhatsAppChannel(elsewhere.owner.client, otherAgent.id);

    const outgoing: Array<[TestChannel, Outgoing[]]> = [
      [sales, [
        {
          wamid: "wamid.S1",
          at: "2026-11-01T08:00:00.000Z",
          statuses: [status("wamid.S1", "sent", UTILITY), status("wamid.S1", "delivered", UTILITY)],
          ends: "DELIVERED",
        },
        {
          wamid: "wamid.S2",
          at: "2026-11-01T23:59:59.999Z",
          statuses: [status("wamid.S2", "delivered", UTILITY), status("wamid.S2", "read", UTILITY)],
          ends: "READ",
        },
        // Read while the chat was open: Meta sends no `delivered`.
        {
          wamid: "wamid.S3",
          at: "2026-11-01T12:00:00.000Z",
          statuses: [status("wamid.S3", "read", MARKETING)],
          ends: "READ",
        },
        {
          wamid: "wamid.S4",
          at: "2026-11-01T13:00:00.000Z",
          statuses: [status("wamid.S4", "delivered", SERVICE)],
          ends: "DELIVERED",
        },
        // Delivered, but no status has carried its pricing.
        {
          wamid: "wamid.S5",
          at: "2026-11-01T14:00:00.000Z",
          statuses: [status("wamid.S5", "delivered")],
          ends: "DELIVERED",
        },
        // Only sent: not delivered, not counted, whatever its pricing says.
        {
          wamid: "wamid.S6",
          at: "2026-11-01T15:00:00.000Z",
          statuses: [status("wamid.S6", "sent", UTILITY)],
          ends: "SENT",
        },
        {
          wamid: "wamid.S7",
          at: "2026-11-01T16:00:00.000Z",
          statuses: [status("wamid.S7", "failed")],
          ends: "FAILED",
        },
        {
          wamid: "wamid.S8",
          at: "2026-11-01T17:00:00.000Z",
          statuses: [status("wamid.S8", "delivered", UTILITY), status("wamid.S8", "failed")],
          ends: "FAILED",
        },
        {
          wamid: "wamid.S9",
          at: "2026-11-02T00:00:00.000Z",
          statuses: [status("wamid.S9", "delivered", UTILITY)],
          ends: "DELIVERED",
        },
        // Just outside 1-3 November: the day before, and `to` itself.
        {
          wamid: "wamid.S10",
          at: "2026-10-31T23:59:59.999Z",
          statuses: [status("wamid.S10", "delivered", UTILITY)],
          ends: "DELIVERED",
        },
        {
          wamid: "wamid.S11",
          at: "2026-11-03T00:00:00.000Z",
          statuses: [status("wamid.S11", "delivered", UTILITY)],
          ends: "DELIVERED",
        },
      ]],
      [support, [
        {
          wamid: "wamid.P1",
          at: "2026-11-01T09:00:00.000Z",
          statuses: [status("wamid.P1", "delivered", AUTHENTICATION)],
          ends: "DELIVERED",
        },
        {
          wamid: "wamid.P2",
          at: "2026-11-02T09:00:00.000Z",
          statuses: [status("wamid.P2", "delivered", MARKETING)],
          ends: "DELIVERED",
        },
        {
          wamid: "wamid.P3",
          at: "2026-11-02T10:00:00.000Z",
          statuses: [status("wamid.P3", "read", MARKETING)],
          ends: "READ",
        },
      ]],
      // Another workspace's delivered messages, on the same days: never counted here.
      [
        theirs,
        [1, 2, 3].map((n) => ({
          wamid: `wamid.O${n}`,
          at: "2026-11-01T10:00:00.000Z",
          statuses: [status(`wamid.O${n}`, "delivered", UTILITY)],
          ends: "DELIVERED" as const,
        })),
      ],
    ];

    await t.step("Meta's statuses move the sent messages, with their pricing", async () => {
      for (const [channel, messages] of outgoing) {
        // The customer writes first (an inbound message: never counted), opening the conversation.
        const inbound = await customerWrites(ta, channel, `wamid.IN-${channel.id}`);
        await db.message.createMany({
          data: messages.map((m) => ({
            conversationId: inbound.conversationId,
            channelId: channel.id,
            direction: "OUTBOUND" as const,
            senderKind: "AI" as const,
            content: "Olá",
            status: "SENT" as const,
            externalId: m.wamid,
            createdAt: new Date(m.at),
          })),
        });
        const res = await postSigned(
          ta.anon,
          channel.id,
          envelope(channel.phoneNumberId, { statuses: messages.flatMap((m) => m.statuses) }),
        );
        assert.equal(res.status, 200);
      }
      const expected = outgoing.flatMap(([, messages]) => messages.map((m) => `${m.wamid} ${m.ends}`)).sort();
      // Each post is stored, then processed by its job: wait until every status has landed.
      await eventually(async () => {
        const rows = await db.message.findMany({
          where: { direction: "OUTBOUND" },
          select: { externalId: true, status: true },
        });
        const now = rows.map((m) => `${m.externalId} ${m.status}`).sort();
        return JSON.stringify(now) === JSON.stringify(expected) ? now : undefined;
      });
    });

    const bySales = (day: string, category: string | null, billable: boolean | null, messages: number) => ({
      channelId: sales.id,
      day,
      category,
      billable,
      messages,
    });
    const bySupport = (day: string, category: string | null, billable: boolean | null, messages: number) => ({
      channelId: support.id,
      day,
      category,
      billable,
      messages,
    });
    /** The answer's order: day, channelId, category, billable, nulls last. */
    const ordered = <
      R extends { day: string; channelId: string; category: string | null; billable: boolean | null },
    >(
      rows: R[],
    ) => {
      const key = (r: R) => [r.day, r.channelId, r.category ?? "\uffff", String(r.billable ?? "~")];
      return [...rows].sort((a, b) => {
        const [x, y] = [key(a), key(b)];
        for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
        return 0;
      });
    };
    const firstDays = {
      from: "2026-11-01T00:00:00.000Z",
      to: "2026-11-03T00:00:00.000Z",
      data: ordered([
        bySales("2026-11-01", "marketing", true, 1),
        bySales("2026-11-01", "service", false, 1),
        bySales("2026-11-01", "utility", true, 2),
        bySales("2026-11-01", null, null, 1),
        bySupport("2026-11-01", "authentication", true, 1),
        bySales("2026-11-02", "utility", true, 1),
        bySupport("2026-11-02", "marketing", true, 2),
      ]),
    };

    const rest = (c: Client, query: string) => c.get(`/api/usage${query}`);
    const graphql = (c: Client, variables: Record<string, unknown>) => c.graphql(USAGE_QUERY, variables);

    await t.step("REST and GraphQL: the exact counts of 1-2 November, nothing else", async () => {
      const res = await rest(owner.client, "?from=2026-11-01&to=2026-11-03");
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body, firstDays);
      const data = gqlOk(await graphql(owner.client, { from: "2026-11-01", to: "2026-11-03" }));
      assert.deepEqual(data.workspace.usage, firstDays);
      // The other workspace sees its own three, and none of these.
      const theirsRes = await rest(elsewhere.owner.client, "?from=2026-11-01&to=2026-11-03");
      assert.deepEqual(theirsRes.body.data, [
        { channelId: theirs.id, day: "2026-11-01", category: "utility", billable: true, messages: 3 },
      ]);
    });

    await t.step(
      "liberal dates: offsets, no zone (UTC), a space; `from` inclusive, `to` exclusive",
      async () => {
        for (
          const query of [
            "?from=2026-11-01T02:00:00%2B02:00&to=2026-11-03 00:00",
            "?from=2026-11-01T00:00Z&to=2026-11-02T21:00:00-03:00",
            "?from=%202026-11-01%20&to=2026-11-03T00:00:00.000000Z",
          ]
        ) {
          const res = await rest(owner.client, query);
          assert.equal(res.status, 200, `${query}: ${JSON.stringify(res.body)}`);
          assert.deepEqual(res.body, firstDays, query);
        }
        // From noon of the 1st: the messages of 12:00 on (S3 at 12:00 sharp included), to the 2nd.
        const noon = gqlOk(await graphql(owner.client, { from: "2026-11-01T12:00:00Z", to: "2026-11-02" }));
        assert.deepEqual(noon.workspace.usage, {
          from: "2026-11-01T12:00:00.000Z",
          to: "2026-11-02T00:00:00.000Z",
          data: [
            bySales("2026-11-01", "marketing", true, 1),
            bySales("2026-11-01", "service", false, 1),
            bySales("2026-11-01", "utility", true, 1),
            bySales("2026-11-01", null, null, 1),
          ],
        });
      },
    );

    await t.step(
      "defaults: the 30 UTC days ending with today; one bound given, the other from it",
      async () => {
        const all = ordered([...firstDays.data, bySales("2026-10-31", "utility", true, 1)]);
        const res = await rest(owner.client, "");
        assert.deepEqual(res.body, {
          from: "2026-10-04T00:00:00.000Z",
          to: "2026-11-03T00:00:00.000Z",
          data: all,
        });
        // null arguments ask for the defaults too.
        const data = gqlOk(await graphql(owner.client, { from: null }));
        assert.deepEqual(data.workspace.usage, res.body);
        const fromOnly = await rest(owner.client, "?from=2026-11-01");
        assert.deepEqual(fromOnly.body, firstDays);
        const toOnly = await rest(owner.client, "?to=2026-11-01");
        assert.deepEqual(toOnly.body, {
          from: "2026-10-02T00:00:00.000Z",
          to: "2026-11-01T00:00:00.000Z",
          data: [bySales("2026-10-31", "utility", true, 1)],
        });
        // 366 days is allowed.
        assert.equal((await rest(owner.client, "?from=2025-11-02&to=2026-11-03")).status, 200);
      },
    );

    await t.step("OWNER, MANAGER and API tokens read it; AGENT and VIEWER get 403", async () => {
      const manager = await ta.seed.member(workspaceId, "MANAGER");
      const token = (await owner.client.post(`/api/workspaces/${workspaceId}/api-tokens`, { label: "usage" }))
        .body.token;
      for (const c of [manager.client, new Client(ta.app, token, workspaceId)]) {
        assert.deepEqual((await rest(c, "?from=2026-11-01&to=2026-11-03")).body, firstDays);
        assert.deepEqual(
          gqlOk(await graphql(c, { from: "2026-11-01", to: "2026-11-03" })).workspace.usage,
          firstDays,
        );
      }
      for (const role of ["AGENT", "VIEWER"] as const) {
        const { client } = await ta.seed.member(workspaceId, role);
        assertProblem(await rest(client, "?from=2026-11-01&to=2026-11-03"), 403, "FORBIDDEN");
        // Refused before its input is read: a bad range is 403 too.
        assertProblem(await rest(client, "?from=never"), 403, "FORBIDDEN");
        const refused: Reply = await graphql(client, { from: "2026-11-01" });
        gqlRefused(refused, "FORBIDDEN", role);
        assert.equal(refused.body.data?.workspace ?? null, null);
        // The workspace itself they may read.
        const own = gqlOk(await client.graphql("{ workspace { id name role } }"));
        assert.deepEqual(own.workspace, { id: workspaceId, name: "Acme", role });
      }
    });

    await t.step("a bad, reversed, empty or over-366-day range is 400 and changes nothing", async () => {
      const before = await snapshot(ta.app, ["Conversation", "Message"]);
      const bad: Array<[string, string]> = [
        ["?from=yesterday", "from"],
        ["?from=2026-02-30", "from"],
        ["?to=2026-11-01T25:00Z", "to"],
        ["?from=%2B010000-01-01", "from"],
        ["?from=2026-11-02&to=2026-11-01", "to"],
        ["?from=2026-11-01&to=2026-11-01", "to"],
        ["?from=2025-11-01&to=2026-11-03", "to"],
        // Only `from`: `to` is the end of today, over 366 days later.
        ["?from=2024-01-01", "to"],
      ];
      for (const [query, field] of bad) {
        const res = await rest(owner.client, query);
        assertProblem(res, 400, "VALIDATION_FAILED", [field]);
      }
      for (const variables of [{ from: "soon" }, { from: "2026-11-03", to: "2026-11-02" }]) {
        const res = await graphql(owner.client, variables);
        const error = gqlRefused(res, "VALIDATION_FAILED", JSON.stringify(variables));
        assert.equal(error.extensions.status, 400);
      }
      assert.equal(await snapshot(ta.app, ["Conversation", "Message"]), before);
    });

    await t.step("the count reads the delivered messages' partial index", async () => {
      const statement = usageCounts.sql({
        workspaceId,
        from: new Date("2026-11-01T00:00:00Z"),
        to: new Date("2026-11-03T00:00:00Z"),
      });
      // The tables are tiny, so a scan would be as good: forbid it, and see which index answers.
      const plan = await db.$transaction(async (tx) => {
        await tx.$executeRawUnsafe("SET LOCAL enable_seqscan = off");
        return await tx.$queryRawUnsafe<Array<{ "QUERY PLAN": string }>>(
          `EXPLAIN ${statement.text}`,
          ...statement.values,
        );
      });
      const text = plan.map((r) => r["QUERY PLAN"]).join("\n");
      assert.match(text, /Message_delivered_idx/, text);
    });
  } finally {
    await ta.close();
  }
});
