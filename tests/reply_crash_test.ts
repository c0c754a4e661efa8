/**
 * A reply survives its process dying at each step (kill -9 of a real server process): after the
 * claim (the model call not answered), during the model call (half its answer read), before the
 * reply's commit (the store transaction waiting on a row lock the test holds), and after the send
 * (the Graph call under way). After a restart the customer is answered exactly once, texts counted
 * at the Graph stand-in, within 30 s of the restart (the platform's promise), with the claim
 * lifetime left at its default (minutes): the restarted process takes the dead one's claim over
 * because that process is gone, not because a timeout ran out. A second process that was running
 * all along does the same; a live process' long model call is never taken over. The stand-ins
 * signal the test when a call arrives and hold their answer, so each kill lands on its step.
 */
import assert from "node:assert/strict";
import { startTestApp } from "./_helpers/app.ts";
import { type ServerProcess, startServerProcess } from "./_helpers/server_process.ts";
import {
  customerMessage,
  messagesOf,
  seedChannel,
  startModelServer,
  waitUntil,
} from "./_helpers/conversations.ts";
import { eventually, startReceiver } from "./_helpers/receiver.ts";
import { sweepStaleSends } from "../src/conversations/outbound.ts";

type Step = "claimed" | "model" | "commit" | "sent";

/** The platform's promise: a dead process' reply is taken over within 30 s. */
const RECOVERY_MS = 30_000;

/** A promise and its resolver. */
function signal<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => resolve = r);
  return { promise, resolve };
}

/** `promise`, or an error after 30 s (a step that never came). */
async function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => timer = setTimeout(() => reject(new Error(`no ${what}`)), 30_000)),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** What the server processes of these tests run with: the stand-ins, and short grouping windows. */
const serverEnv = (modelUrl: string, graphUrl: string) => ({
  OPENAI_API_KEY: "sk-test",
  OPENAI_BASE_URL: modelUrl,
  WHATSAPP_GRAPH_URL: graphUrl,
  GROUPING_FAST_MS: "100",
});

/** A workspace with a FAST agent on a WhatsApp channel; writes a customer's message (by address). */
async function seedConversations(t: Awaited<ReturnType<typeof startTestApp>>) {
  const { workspaceId, owner } = await t.seed.workspace();
  const agent = await t.seed.agent(owner.client, { messageGroupingTime: "FAST" });
  const channel = await seedChannel(t.app, workspaceId, agent.id);
  return (content: string, contact?: string) =>
    customerMessage(t.app, {
      workspaceId,
      agentId: agent.id,
      channelId: channel.id,
      content,
      contact: contact ? { externalId: contact, name: contact } : undefined,
    });
}

async function killedAt(step: Step) {
  // This process stores the customer's messages (its window listener queues the reply jobs); the
  // server processes answer them.
  const t = await startTestApp({ GROUPING_FAST_MS: "100" }, { workers: false });
  const modelArrived = signal();
  const modelAnswer = signal();
  const graphArrived = signal();
  const model = startModelServer(async (call, index) => {
    const text = `resposta ${index}: ${call.body.messages.at(-1).content}`;
    if (index > 0) return { content: text };
    modelArrived.resolve();
    if (step === "claimed") return "hang";
    if (step === "model") {
      // Headers and half the body, then nothing: the process is reading the answer when it dies.
      const stream = new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(
            new TextEncoder().encode('{"id":"chatcmpl-0","object":"chat.completion","choices":[{"index":0,'),
          );
        },
      });
      return new Response(stream, { headers: { "content-type": "application/json" } });
    }
    if (step === "commit") await modelAnswer.promise;
    return { content: text };
  });
  let wamids = 0;
  const graph = startReceiver((_call, index) => {
    if (index === 0) graphArrived.resolve();
    if (index === 0 && step === "sent") return "hang";
    return Response.json({ messaging_product: "whatsapp", messages: [{ id: `wamid.CRASH${++wamids}` }] });
  });
  const env = serverEnv(model.baseUrl, graph.url(""));
  const servers: ServerProcess[] = [];
  const unlock = signal();
  let locking: Promise<unknown> | undefined;
  try {
    const write = await seedConversations(t);
    servers.push(await startServerProcess(t.db.url, env));
    const { conversationId } = await write("oi");

    await within(modelArrived.promise, "the model call");
    if (step === "commit") {
      // The test holds the conversation's row: the reply's store statement waits for it.
      const locked = signal();
      locking = t.app.deps.db.$transaction(async (tx) => {
        await tx.$queryRaw`SELECT id FROM "Conversation" WHERE id = ${conversationId} FOR UPDATE`;
        locked.resolve();
        await unlock.promise;
      }, { timeout: 120_000 });
      await locked.promise;
      modelAnswer.resolve();
      await eventually(async () => {
        const [w] = await t.app.deps.db.$queryRaw<Array<{ n: number }>>`
          SELECT count(*)::int AS n FROM pg_stat_activity
           WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%answered AS%'`;
        return w.n === 1 || undefined;
      }, 20_000);
    }
    if (step === "sent") await within(graphArrived.promise, "the Graph call");
    await servers[0].kill();
    unlock.resolve();
    await locking;
    graph.release();

    const claimed = await t.app.deps.db.conversation.findUniqueOrThrow({ where: { id: conversationId } });
    assert.notEqual(claimed.replyClaimedAt, null, "the dead process left its claim");

    const restartedAt = Date.now();
    servers.push(await startServerProcess(t.db.url, env));
    const left = () => RECOVERY_MS - (Date.now() - restartedAt);
    // The first message is answered once: by the restarted process, or (sent) by the dead one.
    await graph.waitForCalls(1, left());
    if (step === "sent") {
      // Its send may have reached WhatsApp: never sent again, and said so once its process is gone.
      await eventually(async () => {
        const [ai] = (await messagesOf(t.app, conversationId)).filter((m) => m.senderKind === "AI");
        return ai.status === "UNCONFIRMED" || undefined;
      }, left());
      const queued = await sweepStaleSends(t.app.deps, new Date(Date.now() + 5 * 60_000));
      assert.equal(queued, 0);
    }
    await write("ainda aí?");
    await graph.waitForCalls(2, 30_000);
    // Settled: every customer message answered, no claim, no AI message still to be sent.
    const rows = await waitUntil(
      async () => ({
        messages: await messagesOf(t.app, conversationId),
        conversation: await t.app.deps.db.conversation.findUniqueOrThrow({ where: { id: conversationId } }),
      }),
      ({ messages, conversation }) =>
        conversation.replyClaimedAt === null &&
        messages.every((m) => m.senderKind !== "CUSTOMER" || m.answeredAt !== null) &&
        messages.every((m) => m.status !== "PENDING"),
      30_000,
    );
    const ai = rows.messages.filter((m) => m.senderKind === "AI");
    assert.deepEqual(
      ai.map((m) => m.status),
      step === "sent" ? ["UNCONFIRMED", "SENT"] : ["SENT", "SENT"],
    );
    assert.equal(graph.calls.length, 2, graph.calls.map((c) => c.body).join("\n"));
    const texts = graph.calls.map((c) => JSON.parse(c.body).text.body as string);
    assert.deepEqual(texts, ai.map((m) => m.content));
    if (step !== "sent") assert.match(texts[0], /: oi$/);
    assert.match(texts[1], /ainda aí\?$/);
  } catch (error) {
    throw new Error(
      `${(error as Error).message}\nserver stderr:\n${servers.map((s) => s.stderr()).join("\n---\n")}`,
    );
  } finally {
    unlock.resolve();
    await locking?.catch(() => {});
    for (const s of servers) await s.stop();
    await model.close();
    await graph.close();
    await t.close();
  }
}

for (const step of ["claimed", "model", "commit", "sent"] as const) {
  Deno.test(`a process killed ${step === "claimed" ? "after the claim" : step === "model" ? "during the model call" : step === "commit" ? "before the reply's commit" : "after the send"}: the customer is answered exactly once`, () =>
    killedAt(step));
}

/** The server process holding the conversation's reply claim (its instance's pid), once claimed. */
async function claimHolder(t: Awaited<ReturnType<typeof startTestApp>>, conversationId: string) {
  return await eventually(async () => {
    const [row] = await t.app.deps.db.$queryRaw<Array<{ pid: number; claimedAt: Date; claimedBy: number }>>`
      SELECT i.pid, c."replyClaimedAt" AS "claimedAt", c."replyClaimedBy" AS "claimedBy"
        FROM "Conversation" c JOIN "ServerInstance" i ON i.id = c."replyClaimedBy"
       WHERE c.id = ${conversationId} AND c."replyClaimedAt" IS NOT NULL`;
    return row;
  }, RECOVERY_MS);
}

/** Two server processes on one database, a conversation, and a model whose first call hangs. */
async function twoProcesses(
  run: (s: {
    t: Awaited<ReturnType<typeof startTestApp>>;
    servers: ServerProcess[];
    write: (content: string, contact?: string) => Promise<{ conversationId: string }>;
    model: ReturnType<typeof startModelServer>;
    graph: ReturnType<typeof startReceiver>;
    firstCall: Promise<void>;
    answerFirst: () => void;
  }) => Promise<void>,
) {
  const t = await startTestApp({ GROUPING_FAST_MS: "100" }, { workers: false });
  const arrived = signal();
  const answer = signal();
  const model = startModelServer(async (call, index) => {
    if (index === 0) {
      arrived.resolve();
      await answer.promise;
    }
    return { content: `resposta ${index}: ${call.body.messages.at(-1).content}` };
  });
  let wamids = 0;
  const graph = startReceiver(() =>
    Response.json({ messaging_product: "whatsapp", messages: [{ id: `wamid.TWO${++wamids}` }] })
  );
  const env = serverEnv(model.baseUrl, graph.url(""));
  const servers: ServerProcess[] = [];
  try {
    const write = await seedConversations(t);
    servers.push(await startServerProcess(t.db.url, env), await startServerProcess(t.db.url, env));
    await run({
      t,
      servers,
      write,
      model,
      graph,
      firstCall: arrived.promise,
      answerFirst: answer.resolve,
    });
  } catch (error) {
    throw new Error(
      `${(error as Error).message}\nserver stderr:\n${servers.map((s) => s.stderr()).join("\n---\n")}`,
    );
  } finally {
    answer.resolve();
    for (const s of servers) await s.stop();
    await model.close();
    await graph.close();
    await t.close();
  }
}

Deno.test("a process killed during the model call: a second process running all along takes its reply over within 30 s", () =>
  twoProcesses(async ({ t, servers, write, model, graph, firstCall }) => {
    const { conversationId } = await write("oi");
    await within(firstCall, "the model call");
    const holder = await claimHolder(t, conversationId);
    const dying = servers.find((s) => s.child.pid === holder.pid)!;
    assert.ok(dying, "a server process holds the claim");
    const killedAt = Date.now();
    await dying.kill();
    // The other process answers: a second model call, then the one text the customer gets.
    await graph.waitForCalls(1, RECOVERY_MS - (Date.now() - killedAt));
    assert.equal(model.calls.length, 2);
    await eventually(async () => {
      const c = await t.app.deps.db.conversation.findUniqueOrThrow({ where: { id: conversationId } });
      return c.replyClaimedAt === null || undefined;
    });
    const ai = (await messagesOf(t.app, conversationId)).filter((m) => m.senderKind === "AI");
    assert.deepEqual(ai.map((m) => [m.status, m.content]), [["SENT", "resposta 1: oi"]]);
    assert.equal(graph.calls.length, 1);
  }));

Deno.test("a live process' long model call is never taken over, while a dead process' claim is", () =>
  twoProcesses(async ({ t, write, model, graph, firstCall, answerFirst }) => {
    const { conversationId } = await write("oi");
    await within(firstCall, "the model call");
    const held = await claimHolder(t, conversationId);
    // A claim of a process that is gone (no such instance) on another conversation: freed by the
    // next look of either process, which sees the live claim in the same statement and keeps it.
    const { conversationId: orphan } = await write("olá", "5511900000002");
    await graph.waitForCalls(1, RECOVERY_MS);
    await t.app.deps.db.$executeRaw`
      UPDATE "Conversation" SET "replyClaimedAt" = now(), "replyClaimedBy" = 2147483000 WHERE id = ${orphan}`;
    await eventually(async () => {
      const c = await t.app.deps.db.conversation.findUniqueOrThrow({ where: { id: orphan } });
      return c.replyClaimedAt === null || undefined;
    }, RECOVERY_MS);
    // And once more, for a look that began after the first one ended.
    await t.app.deps.db.$executeRaw`
      UPDATE "Conversation" SET "replyClaimedAt" = now(), "replyClaimedBy" = 2147483001 WHERE id = ${orphan}`;
    await eventually(async () => {
      const c = await t.app.deps.db.conversation.findUniqueOrThrow({ where: { id: orphan } });
      return c.replyClaimedAt === null || undefined;
    }, RECOVERY_MS);
    const still = await claimHolder(t, conversationId);
    assert.deepEqual(still, held, "the live claim is untouched");
    assert.equal(model.calls.length, 2, "the held conversation's model call was not made again");

    answerFirst();
    await graph.waitForCalls(2, RECOVERY_MS);
    await eventually(async () => {
      const c = await t.app.deps.db.conversation.findUniqueOrThrow({ where: { id: conversationId } });
      return c.replyClaimedAt === null || undefined;
    });
    const ai = (await messagesOf(t.app, conversationId)).filter((m) => m.senderKind === "AI");
    assert.deepEqual(ai.map((m) => m.content), ["resposta 0: oi"]);
    assert.equal(model.calls.length, 2);
    assert.equal(graph.calls.length, 2);
  }));
