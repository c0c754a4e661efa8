/**
 * The conversation timers (docs/behaviour.md "Replies") with an injected clock: the reminder, once
 * per silence, half of autoCloseMinutes after the agent's last message; the auto-close after
 * autoCloseMinutes of silence, `conversation.closed` with reason INACTIVITY. Each timer job is run
 * twice at once (two processes) and early (a stale job): it acts exactly once, and only when due.
 */
import assert from "node:assert/strict";
import { startTestApp, type TestApp } from "./_helpers/app.ts";
import { ManualClock } from "./_helpers/clock.ts";
import { customerMessage, eventsOf, messagesOf, seedChannel, startGraph } from "./_helpers/conversations.ts";
import { logSink } from "./_helpers/logs.ts";
import { SEASONAL_PROMOTION, storeTemplates } from "./_helpers/templates.ts";
import { REMINDER_TEXT, runTimer } from "../src/conversations/timers.ts";
import type { BuildOptions } from "../src/app.ts";

const MINUTE = 60_000;

async function setup(
  clock: ManualClock,
  fields: Record<string, unknown> = {},
  channelType: "API" | "WHATSAPP" = "API",
  { env = {}, ...options }: { env?: Record<string, string> } & BuildOptions = {},
) {
  // API channel by default: reminders are SENT at once. A window far away keeps the reply pipeline
  // out of it.
  const t = await startTestApp({ GROUPING_MEDIUM_MS: "3600000", ...env }, { clock, ...options });
  const { workspaceId, owner } = await t.seed.workspace();
  const agent = await t.seed.agent(owner.client, { autoCloseMinutes: 60, ...fields });
  const channel = await seedChannel(t.app, workspaceId, agent.id, channelType);
  const write = (content: string) =>
    customerMessage(t.app, { workspaceId, agentId: agent.id, channelId: channel.id, content });
  return { t, write, agent, channel, owner };
}

/** The agent's reply at the clock's now, as the pipeline records it on the conversation. */
async function agentReplied(t: TestApp, conversationId: string, clock: ManualClock) {
  const now = clock.now();
  await t.app.deps.db.conversation.update({
    where: { id: conversationId },
    data: { lastMessageAt: now, lastAgentMessageAt: now },
  });
}

const reminders = async (t: TestApp, conversationId: string) =>
  (await messagesOf(t.app, conversationId)).filter((m) =>
    m.senderKind === "AI" && m.content === REMINDER_TEXT
  );

Deno.test("the reminder: due at half of autoCloseMinutes after the agent's last message, once per silence", async () => {
  const clock = new ManualClock(new Date("2026-11-20T10:00:00.000Z"));
  const { t, write } = await setup(clock);
  try {
    const m = await write("oi");
    clock.advance(1000);
    await agentReplied(t, m.conversationId, clock);
    const job = { conversationId: m.conversationId, kind: "reminder" as const };

    clock.advance(30 * MINUTE - 1);
    await runTimer(t.app.deps, job);
    assert.equal((await reminders(t, m.conversationId)).length, 0, "one millisecond early: nothing");

    clock.advance(1);
    await Promise.all([runTimer(t.app.deps, job), runTimer(t.app.deps, job)]);
    assert.equal((await reminders(t, m.conversationId)).length, 1, "two processes at once: one reminder");
    const conv = await t.app.deps.db.conversation.findUniqueOrThrow({ where: { id: m.conversationId } });
    assert.equal(conv.reminderSentAt!.toISOString(), "2026-11-20T10:30:01.000Z");
    // The reminder does not move the auto-close.
    assert.equal(conv.lastMessageAt!.toISOString(), "2026-11-20T10:00:01.000Z");

    clock.advance(10 * MINUTE);
    await runTimer(t.app.deps, job);
    assert.equal((await reminders(t, m.conversationId)).length, 1, "never two for the same silence");

    // A new exchange starts a new silence.
    await write("ainda estou aqui");
    clock.advance(1000);
    await agentReplied(t, m.conversationId, clock);
    clock.advance(30 * MINUTE);
    await runTimer(t.app.deps, job);
    assert.equal((await reminders(t, m.conversationId)).length, 2);
    const sent = (await eventsOf(t.app, m.conversationId)).filter((e) => e.type === "message.sent");
    assert.deepEqual(sent.map((e) => [e.data.sender, e.data.message.content]), [
      ["AI", REMINDER_TEXT],
      ["AI", REMINDER_TEXT],
    ]);
  } finally {
    await t.close();
  }
});

Deno.test("no reminder when enabledReminder is off, nor on a HUMAN conversation", async () => {
  const clock = new ManualClock(new Date("2026-11-20T10:00:00.000Z"));
  const { t, write } = await setup(clock, { enabledReminder: false });
  try {
    const m = await write("oi");
    await agentReplied(t, m.conversationId, clock);
    clock.advance(45 * MINUTE);
    await runTimer(t.app.deps, { conversationId: m.conversationId, kind: "reminder" });
    assert.equal((await reminders(t, m.conversationId)).length, 0);
    // Reminders on, but a person has the conversation.
    const conv = await t.app.deps.db.conversation.update({
      where: { id: m.conversationId },
      data: { status: "HUMAN" },
      select: { agentId: true },
    });
    await t.app.deps.db.agent.update({ where: { id: conv.agentId }, data: { enabledReminder: true } });
    await runTimer(t.app.deps, { conversationId: m.conversationId, kind: "reminder" });
    assert.equal((await reminders(t, m.conversationId)).length, 0);
  } finally {
    await t.close();
  }
});

Deno.test("the auto-close: after autoCloseMinutes of silence, CLOSED once with reason INACTIVITY; a newer message makes the job stale", async () => {
  const clock = new ManualClock(new Date("2026-11-20T23:30:00.000Z"));
  const { t, write } = await setup(clock);
  try {
    const m = await write("oi");
    // The listener scheduled the auto-close job on pg-boss, an hour ahead.
    const [job] = await t.app.deps.db.$queryRawUnsafe<Array<{ data: unknown; secs: number }>>(
      `SELECT data, extract(epoch FROM start_after - now())::float AS secs FROM pgboss.job
        WHERE name = 'conversation-timer' AND data->>'kind' = 'auto-close'`,
    );
    assert.deepEqual(job.data, { conversationId: m.conversationId, kind: "auto-close" });
    assert.ok(job.secs > 3500 && job.secs <= 3600, `due in ${job.secs} s`);

    const close = { conversationId: m.conversationId, kind: "auto-close" as const };
    clock.advance(59 * MINUTE);
    await write("espera"); // moves the last message: the first job is now stale
    clock.advance(1 * MINUTE);
    await runTimer(t.app.deps, close);
    let conv = await t.app.deps.db.conversation.findUniqueOrThrow({ where: { id: m.conversationId } });
    assert.equal(conv.status, "OPEN");

    clock.advance(59 * MINUTE);
    await Promise.all([runTimer(t.app.deps, close), runTimer(t.app.deps, close)]);
    conv = await t.app.deps.db.conversation.findUniqueOrThrow({ where: { id: m.conversationId } });
    assert.equal(conv.status, "CLOSED");
    assert.equal(conv.closeReason, "INACTIVITY");
    const closed = (await eventsOf(t.app, m.conversationId)).filter((e) => e.type === "conversation.closed");
    assert.deepEqual(closed.map((e) => e.data), [{ reason: "INACTIVITY" }]);

    // The next customer message opens a new conversation.
    const again = await write("voltei");
    assert.notEqual(again.conversationId, m.conversationId);
  } finally {
    await t.close();
  }
});

Deno.test("on WhatsApp, outside the 24-hour window the reminder is the agent's reminderTemplate, or nothing", async (t) => {
  const clock = new ManualClock(new Date("2026-11-20T10:00:00.000Z"));
  const graph = startGraph();
  const logs = logSink();
  // The reminder comes due at half of autoCloseMinutes: 2 000 minutes, past the window's 1 440.
  const { t: ta, write, agent, channel, owner } = await setup(clock, { autoCloseMinutes: 4000 }, "WHATSAPP", {
    env: { WHATSAPP_GRAPH_URL: graph.url("") },
    logger: logs.logger,
  });
  const db = ta.app.deps.db;
  const silence = async (minutes: number) => {
    const m = await write("oi");
    clock.advance(1000);
    await agentReplied(ta, m.conversationId, clock);
    clock.advance(minutes * MINUTE);
    await runTimer(ta.app.deps, { conversationId: m.conversationId, kind: "reminder" });
    return m.conversationId;
  };
  const reminderSentAt = async (id: string) =>
    (await db.conversation.findUniqueOrThrow({ where: { id } })).reminderSentAt;
  try {
    await t.step("no reminderTemplate: skipped, silently", async () => {
      const id = await silence(2000);
      assert.equal((await reminders(ta, id)).length, 0, "no free-form message outside the window");
      assert.equal(await reminderSentAt(id), null);
      assert.equal(graph.calls.length, 0);
      assert.deepEqual(logs.errors(), []);
    });

    const reminderTemplate = {
      name: "seasonal_promotion_text_only",
      language: "en_US",
      parameters: { header: "Summer Sale", body: ["25OFF", "15%"] },
    };
    await storeTemplates(ta.app, channel, [SEASONAL_PROMOTION]);
    const put = await owner.client.put(`/api/agents/${agent.id}`, {
      name: agent.name,
      autoCloseMinutes: 4000,
      reminderTemplate,
    });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.deepEqual(put.body.reminderTemplate, reminderTemplate);

    await t.step("with one: that template is the reminder, sent as Meta documents it", async () => {
      const id = await silence(2000);
      const [call] = await graph.waitForCalls(1);
      assert.deepEqual(JSON.parse(call.body), {
        messaging_product: "whatsapp",
        to: "5511999990000",
        type: "template",
        template: {
          name: "seasonal_promotion_text_only",
          language: { code: "en_US" },
          components: [
            { type: "header", parameters: [{ type: "text", text: "Summer Sale" }] },
            { type: "body", parameters: [{ type: "text", text: "25OFF" }, { type: "text", text: "15%" }] },
          ],
        },
      });
      const [sent] = (await messagesOf(ta.app, id)).filter((m) => m.senderKind === "AI");
      assert.deepEqual([sent.type, sent.status, sent.content, sent.template], [
        "TEMPLATE",
        "SENT",
        "Shop now through the end of August and use code 25OFF to get 15% off of all merchandise.",
        { name: "seasonal_promotion_text_only", language: "en_US" },
      ]);
      assert.ok(await reminderSentAt(id));
    });

    await t.step("inside the window it stays the text reminder", async () => {
      await db.agent.update({ where: { id: agent.id }, data: { autoCloseMinutes: 60 } });
      const id = await silence(30);
      await graph.waitForCalls(2);
      assert.deepEqual(JSON.parse(graph.calls[1].body).text, { body: REMINDER_TEXT });
      assert.equal((await reminders(ta, id)).length, 1);
      await db.agent.update({ where: { id: agent.id }, data: { autoCloseMinutes: 4000 } });
    });

    await t.step("a template that is no longer APPROVED: skipped, with one warning saying why", async () => {
      await db.whatsAppTemplate.updateMany({ where: { channelId: channel.id }, data: { status: "PAUSED" } });
      const before = await db.message.count({ where: { senderKind: "AI" } });
      const id = await silence(2000);
      assert.equal(await db.message.count({ where: { senderKind: "AI" } }), before, "nothing stored");
      const conv = await db.conversation.findUniqueOrThrow({ where: { id } });
      assert.ok(conv.reminderSentAt! <= conv.lastContactMessageAt!, "this silence's reminder is not claimed");
      assert.equal(graph.calls.length, 2);
      const warned = logs.errors();
      assert.equal(warned.length, 1, JSON.stringify(warned));
      assert.equal(warned[0].msg, "reminder skipped outside the window: its template cannot be sent");
      assert.equal(warned[0].code, "TEMPLATE_NOT_APPROVED");
      assert.match(warned[0].reason, /PAUSED/);
    });
  } finally {
    await ta.close();
    await graph.close();
  }
});
