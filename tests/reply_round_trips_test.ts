/**
 * The SQL round trips of one reply job (the platform's share of reply latency): every statement runReply sends
 * is counted (createPrisma's onQuery), from the claim to the claim's release, for the paths the
 * bench takes (one part, two parts) and the quiet ones (claim lost, nothing to say). The app runs
 * without workers and with an injected clock: the test runs the job itself. A transaction's BEGIN and
 * COMMIT are among the statements listed.
 */
import assert from "node:assert/strict";
import { startTestApp, type TestApp } from "./_helpers/app.ts";
import { ManualClock } from "./_helpers/clock.ts";
import {
  customerMessage,
  lastUserMessage,
  messagesOf,
  type ModelAnswer,
  type ModelCall,
  seedChannel,
  startGraph,
  startModelServer,
  waitUntil,
} from "./_helpers/conversations.ts";
import { createPrisma } from "../src/db/client.ts";
import { runReply } from "../src/conversations/pipeline/reply.ts";
import { MESSAGE_SEND_QUEUE } from "../src/conversations/outbound.ts";
import { REPLY_QUEUE } from "../src/conversations/pipeline/window.ts";
import type { Receiver } from "./_helpers/receiver.ts";
import type { Deps } from "../src/context.ts";

interface Setup {
  t: TestApp;
  clock: ManualClock;
  graph: Receiver;
  /** The app's deps with a client that records every statement it sends. */
  deps: Deps;
  statements: string[];
  send(
    content: string,
    beforeCommit?: () => Promise<void>,
  ): Promise<{ conversationId: string; messageId: string }>;
  model: ReturnType<typeof startModelServer>;
  close(): Promise<void>;
}

const WINDOW_MS = 1000;

async function setup(
  script: (call: ModelCall, index: number) => ModelAnswer,
  agentFields: Record<string, unknown> = {},
  graphAnswer?: (index: number) => Response,
): Promise<Setup> {
  const model = startModelServer(script);
  const graph = startGraph(graphAnswer);
  const clock = new ManualClock();
  const t = await startTestApp({
    OPENAI_API_KEY: "sk-test",
    OPENAI_BASE_URL: model.baseUrl,
    WHATSAPP_GRAPH_URL: graph.url(""),
    GROUPING_FAST_MS: String(WINDOW_MS),
  }, { clock, workers: false });
  const statements: string[] = [];
  const db = createPrisma(t.db.url, { onQuery: (sql) => statements.push(sql) });
  const { workspaceId, owner } = await t.seed.workspace();
  const agent = await t.seed.agent(owner.client, { messageGroupingTime: "FAST", ...agentFields });
  const channel = await seedChannel(t.app, workspaceId, agent.id);
  // As in a running process: the channel is in the cache already.
  await t.app.deps.channels.whatsapp(channel.id);
  return {
    t,
    clock,
    graph,
    deps: { ...t.app.deps, db },
    statements,
    model,
    send: (content, beforeCommit) =>
      customerMessage(t.app, {
        workspaceId,
        agentId: agent.id,
        channelId: channel.id,
        content,
        beforeCommit,
      }),
    async close() {
      await db.$disconnect();
      await t.close();
      await model.close();
      await graph.close();
    },
  };
}

/** Runs the reply job of `conversationId` once its window closed; the statements it sent. */
async function reply(s: Setup, conversationId: string): Promise<string[]> {
  s.clock.advance(WINDOW_MS);
  s.statements.length = 0;
  await runReply(s.deps, { conversationId });
  return [...s.statements];
}

const listed = (statements: string[]) => statements.map((q, i) => `${i + 1}. ${q.slice(0, 160)}`).join("\n");

Deno.test("one reply of one part: the statements from the claim to its release", async () => {
  const s = await setup(() => ({ content: "Olá! Como posso ajudar?" }));
  try {
    const m = await s.send("oi");
    const statements = await reply(s, m.conversationId);
    const ai = (await messagesOf(s.t.app, m.conversationId)).filter((r) => r.senderKind === "AI");
    assert.equal(ai.length, 1);
    assert.equal(ai[0].status, "SENT");
    assert.equal(ai[0].externalId, "wamid.TEST0");
    assert.equal(ai[0].sendClaimedAt, null);
    assert.equal(s.graph.calls.length, 1);
    const conversation = await s.t.app.deps.db.conversation.findUniqueOrThrow({
      where: { id: m.conversationId },
    });
    assert.equal(conversation.replyClaimedAt, null, "released");
    assert.equal(statements.length, 7, listed(statements));
  } finally {
    await s.close();
  }
});

Deno.test("a reply of two parts", async () => {
  const s = await setup(() => ({ content: "Primeira parte.\n\nSegunda parte." }), { splitMessages: true });
  try {
    const m = await s.send("oi");
    const statements = await reply(s, m.conversationId);
    const ai = (await messagesOf(s.t.app, m.conversationId)).filter((r) => r.senderKind === "AI");
    assert.deepEqual(ai.map((r) => [r.content, r.status, r.externalId]), [
      ["Primeira parte.", "SENT", "wamid.TEST0"],
      ["Segunda parte.", "SENT", "wamid.TEST1"],
    ]);
    assert.equal(statements.length, 9, listed(statements));
  } finally {
    await s.close();
  }
});

Deno.test("a retryable failure of the reply's send: FAILED with the claim's release, its retry job queued", async () => {
  const s = await setup(
    () => ({ content: "Olá!" }),
    {},
    () => Response.json({ error: { message: "Something went wrong", code: 131000 } }, { status: 503 }),
  );
  try {
    const m = await s.send("oi");
    const statements = await reply(s, m.conversationId);
    const [ai] = (await messagesOf(s.t.app, m.conversationId)).filter((r) => r.senderKind === "AI");
    assert.equal(ai.status, "FAILED");
    assert.deepEqual(
      { ...(ai.error as Record<string, unknown>), message: undefined },
      { status: 503, code: 131000, message: undefined, retryable: true, attempt: 1, willRetry: true },
    );
    assert.equal(ai.sendClaimedAt, null);
    const conversation = await s.t.app.deps.db.conversation.findUniqueOrThrow({
      where: { id: m.conversationId },
    });
    assert.equal(conversation.replyClaimedAt, null);
    const jobs = await s.t.app.deps.db.$queryRaw<Array<{ attempt: number }>>`
      SELECT (data->>'attempt')::int AS attempt FROM pgboss.job
       WHERE name = ${MESSAGE_SEND_QUEUE} AND data->>'messageId' = ${ai.id} ORDER BY created_on`;
    assert.deepEqual(jobs.map((j) => j.attempt), [2], "the retry (no job for the writer's own send)");
    assert.equal(statements.length, 7, listed(statements));
  } finally {
    await s.close();
  }
});

Deno.test("a job that finds the reply in progress: one statement, and it comes back when the claim would be stale", async () => {
  let release!: () => void;
  const held = new Promise<void>((r) => release = r);
  let asked!: () => void;
  const called = new Promise<void>((r) => asked = r);
  const s = await setup(async (call) => {
    asked();
    await held;
    return { content: `eco: ${lastUserMessage(call)}` };
  });
  try {
    const m = await s.send("oi");
    s.clock.advance(WINDOW_MS);
    const first = runReply(s.t.app.deps, { conversationId: m.conversationId });
    await called;
    s.statements.length = 0;
    await runReply(s.deps, { conversationId: m.conversationId });
    const statements = [...s.statements];
    const [again] = await s.t.app.deps.db.$queryRaw<Array<{ secs: number }>>`
      SELECT extract(epoch FROM start_after - created_on)::float AS secs FROM pgboss.job
       WHERE name = ${REPLY_QUEUE} ORDER BY created_on DESC LIMIT 1`;
    const ttl = s.t.app.deps.config.replyClaimTtlMs / 1000;
    assert.ok(again.secs > ttl - 1 && again.secs <= ttl + 1, `back in ${again.secs} s`);
    release();
    await first;
    assert.equal(statements.length, 1, listed(statements));
  } finally {
    await s.close();
  }
});

Deno.test("a PAUSED agent's conversation: the messages are handled silently", async () => {
  const s = await setup(() => ({ content: "never" }));
  try {
    const m = await s.send("oi");
    await s.t.app.deps.db.agent.updateMany({ data: { status: "PAUSED" } });
    const statements = await reply(s, m.conversationId);
    const rows = await messagesOf(s.t.app, m.conversationId);
    assert.deepEqual(rows.map((r) => [r.senderKind, r.answeredAt !== null]), [["CUSTOMER", true]]);
    // The release saw the message as handled (it marked it itself): no follow-up reply job.
    const [jobs] = await s.t.app.deps.db.$queryRaw<Array<{ n: number }>>`
      SELECT count(*)::int AS n FROM pgboss.job WHERE name = ${REPLY_QUEUE}`;
    assert.equal(jobs.n, 1, "the message's own job only");
    assert.equal(statements.length, 2, listed(statements));
  } finally {
    await s.close();
  }
});

Deno.test("a message whose transaction holds the conversation when the claim comes: the claim waits, fails, and the next reply answers both", async () => {
  const s = await setup((call) => ({ content: `eco: ${lastUserMessage(call)}` }));
  try {
    const first = await s.send("primeira");
    s.clock.advance(WINDOW_MS); // the first window has closed
    let commit!: () => void;
    const held = new Promise<void>((r) => commit = r);
    let stored!: () => void;
    const inTransaction = new Promise<void>((r) => stored = r);
    // The second message's transaction has moved the window (replyDueAt) and not committed yet.
    const second = s.send("segunda", () => {
      stored();
      return held;
    });
    await inTransaction;
    s.statements.length = 0;
    const job = runReply(s.deps, { conversationId: first.conversationId });
    await waitUntil(
      () =>
        s.t.app.deps.db.$queryRaw<Array<{ n: number }>>`
          SELECT count(*)::int AS n FROM pg_stat_activity
           WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      ([row]) => row.n === 1,
    );
    commit();
    await second;
    await job;
    // Claimed before, the statement's snapshot saw the first message only; the claim re-checked
    // the row it waited for, found the window moved, and the job left both to the next reply.
    assert.equal(s.model.calls.length, 0);
    assert.equal(s.statements.length, 2, listed(s.statements));
    const unanswered = (await messagesOf(s.t.app, first.conversationId)).filter((r) => r.answeredAt === null);
    assert.equal(unanswered.length, 2);

    await reply(s, first.conversationId);
    assert.equal(s.model.calls.length, 1);
    assert.equal(lastUserMessage(s.model.calls[0]), "primeira\nsegunda");
  } finally {
    await s.close();
  }
});

Deno.test("maxDailyMessages: the day's count comes with the claim; over the limit the reply is silent", async () => {
  const s = await setup((call) => ({ content: `eco: ${lastUserMessage(call)}` }), { maxDailyMessages: 1 });
  try {
    const m = await s.send("um");
    assert.equal((await reply(s, m.conversationId)).length, 7);
    await s.send("dois");
    const statements = await reply(s, m.conversationId);
    const rows = await messagesOf(s.t.app, m.conversationId);
    assert.deepEqual(rows.map((r) => [r.senderKind, r.content, r.answeredAt !== null]), [
      ["CUSTOMER", "um", true],
      ["AI", "eco: um", false],
      ["CUSTOMER", "dois", true],
    ]);
    assert.equal(s.model.calls.length, 1);
    assert.equal(statements.length, 2, listed(statements));
  } finally {
    await s.close();
  }
});
