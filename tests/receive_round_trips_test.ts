/**
 * The SQL round trips of storing a customer message (the platform's share of reply latency), counted with
 * createPrisma's onQuery: the contact upsert (its row lock serializes one contact's messages) with the
 * transaction's BEGIN sent ahead of it, one statement for the dedup check, the new conversation and
 * the message, one for the event batch (webhook rows, live NOTIFY and the window's UPDATE together),
 * then the reply job and the timers (pg-boss inserts), and COMMIT. The app runs without workers
 * (nothing else writes meanwhile).
 */
import assert from "node:assert/strict";
import { startTestApp } from "./_helpers/app.ts";
import { seedChannel } from "./_helpers/conversations.ts";
import { createPrisma } from "../src/db/client.ts";
import { receiveCustomerMessage } from "../src/conversations/receive.ts";

const listed = (statements: string[]) => statements.map((q, i) => `${i + 1}. ${q.slice(0, 120)}`).join("\n");

Deno.test("storing a customer message: six round trips, BEGIN among them, whether the conversation is new or open; a duplicate three", async () => {
  const t = await startTestApp({}, { workers: false });
  const statements: string[] = [];
  const db = createPrisma(t.db.url, { onQuery: (sql) => statements.push(sql) });
  try {
    const { workspaceId, owner } = await t.seed.workspace();
    const agent = await t.seed.agent(owner.client);
    const channel = await seedChannel(t.app, workspaceId, agent.id);
    const deps = { ...t.app.deps, db };
    const ref = { id: channel.id, workspaceId, agentId: agent.id };
    const store = async (externalId: string, content: string) => {
      statements.length = 0;
      const received = await receiveCustomerMessage(deps, ref, {
        externalId,
        contact: { externalId: "5511988887777", name: "Maria" },
        type: "TEXT",
        content,
      });
      return { received, statements: [...statements] };
    };

    const first = await store("wamid.rt-1", "oi");
    assert.equal(first.received.inserted && first.received.opened, true);
    assert.equal(first.statements.length, 6, listed(first.statements));
    assert.match(
      first.statements[0],
      /^BEGIN; SET LOCAL idle_in_transaction_session_timeout = '15s';\n\s*INSERT INTO "Contact"/,
    );
    assert.match(first.statements[1], /INSERT INTO "Conversation"[\s\S]*INSERT INTO "Message"/);
    assert.match(first.statements[2], /webhook_events[\s\S]*pg_notify[\s\S]*window_restarted/);
    assert.match(first.statements[3], /INSERT INTO pgboss/);
    assert.match(first.statements[4], /INSERT INTO pgboss/);
    assert.match(first.statements[5], /^COMMIT/);

    const second = await store("wamid.rt-2", "tudo bem?");
    assert.equal(second.received.inserted && !second.received.opened, true);
    // The conversation's auto-close job already waits: the timer's insert brings it forward if now
    // due earlier, in the same statement.
    assert.equal(second.statements.length, 6, listed(second.statements));
    assert.match(second.statements[4], /^WITH forward AS \(UPDATE pgboss.job[\s\S]*INSERT INTO pgboss/);

    // The same WhatsApp id again: found after the lock, rolled back, no event, no job.
    const again = await store("wamid.rt-2", "tudo bem?");
    assert.equal(again.received.inserted, false);
    assert.equal(again.statements.length, 3, listed(again.statements));
    assert.match(again.statements[2], /^ROLLBACK/);
    assert.equal(await t.app.deps.db.message.count({ where: { channelId: channel.id } }), 2);
    const conversations = await t.app.deps.db.conversation.findMany({ where: { channelId: channel.id } });
    assert.equal(conversations.length, 1);
    assert.ok(conversations[0].replyDueAt, "the window was started");
  } finally {
    await db.$disconnect();
    await t.close();
  }
});
