/**
 * Stand-ins for the reply pipeline's tests: a scripted OpenAI-compatible server (chat completions
 * with usage) and a WhatsApp Graph stand-in on 127.0.0.1; a channel written directly with its sealed
 * secrets; and `customerMessage`, which stores a customer message exactly as the inbound code does
 * (one transaction: contact upserted, the OPEN/HUMAN conversation found or created, the message
 * stored RECEIVED, `conversation.opened` and `message.received` published).
 */
import type { App } from "../../src/app.ts";
import { type Answer, eventually, type Receiver, startReceiver } from "./receiver.ts";

export interface ModelCall {
  // deno-lint-ignore no-explicit-any
  body: any;
}

/** A tool call the stand-in answers with; `arguments` is sent as given (a string) or as JSON text. */
export interface ScriptedToolCall {
  id?: string;
  name: string;
  arguments: unknown;
}

export interface ModelUsage {
  prompt_tokens: number;
  completion_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number };
}

/** A chat completion's message: text, and tool calls for the supervisor's tests. */
export interface ScriptedMessage {
  content: string;
  toolCalls?: ScriptedToolCall[];
  usage?: ModelUsage;
}

export type ModelAnswer =
  | ScriptedMessage
  | Response
  /** No answer until the server closes (a model that never answers). */
  | "hang"
  | Promise<ScriptedMessage | Response | "hang">;

export interface ModelServer {
  baseUrl: string;
  calls: ModelCall[];
  waitForCalls(n: number, timeoutMs?: number): Promise<ModelCall[]>;
  close(): Promise<void>;
}

/** The user message of a call: the grouped customer messages the model was asked to answer. */
export const lastUserMessage = (call: ModelCall): string => call.body.messages.at(-1).content;

/** An OpenAI-compatible server that answers each chat completion with `script(call, index)`. */
export function startModelServer(script: (call: ModelCall, index: number) => ModelAnswer): ModelServer {
  const calls: ModelCall[] = [];
  const receiver: Receiver = startReceiver(async (call, index): Promise<Answer> => {
    const modelCall = { body: JSON.parse(call.body) };
    calls[index] = modelCall;
    const answer = await script(modelCall, index);
    if (answer instanceof Response || answer === "hang") return answer;
    return chatCompletion(modelCall.body, index, answer);
  });
  return {
    baseUrl: receiver.url("/v1"),
    calls,
    async waitForCalls(n, timeoutMs) {
      await receiver.waitForCalls(n, timeoutMs);
      return calls;
    },
    close: () => receiver.close(),
  };
}

/**
 * The OpenAI chat completion answering `body` with `answer` (the stand-ins' one writer of it): its
 * text, its tool calls (`finish_reason: "tool_calls"`), its usage (120 prompt and 30 completion
 * tokens unless given).
 */
// deno-lint-ignore no-explicit-any
export function chatCompletion(body: any, index: number, answer: ScriptedMessage): Response {
  const usage = answer.usage ?? { prompt_tokens: 120, completion_tokens: 30 };
  const toolCalls = answer.toolCalls?.length
    ? answer.toolCalls.map((c, n) => ({
      id: c.id ?? `call_${index}_${n}`,
      type: "function",
      function: {
        name: c.name,
        arguments: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments),
      },
    }))
    : undefined;
  const message = toolCalls
    ? { role: "assistant", content: answer.content || null, tool_calls: toolCalls }
    : { role: "assistant", content: answer.content };
  return Response.json({
    id: `chatcmpl-${index}`,
    object: "chat.completion",
    created: 1,
    model: body.model,
    choices: [{ index: 0, message, finish_reason: toolCalls ? "tool_calls" : "stop" }],
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
  });
}

/** Meta's error body (Cloud API error codes page): message, type, code, error_data.details, fbtrace_id. */
export const graphError = (status: number, code: number, message: string, details?: string) =>
  Response.json({
    error: {
      message,
      type: "OAuthException",
      code,
      ...(details ? { error_data: { messaging_product: "whatsapp", details } } : {}),
      fbtrace_id: "Az8or2yhqkZfEZ-_4Qn_Bam",
    },
  }, { status });

/** Meta's answer to a free-form message outside the customer's 24-hour window (its error 131047). */
export const reengagementError = () =>
  graphError(
    400,
    131047,
    "(#131047) Re-engagement message",
    "Message failed to send because more than 24 hours have passed since the customer last replied to this number.",
  );

/** A Graph API stand-in: each send answered by `answer` (default, or when it answers undefined: 200 with a new wamid). */
export function startGraph(answer?: (index: number) => Response | undefined): Receiver {
  return startReceiver((_call, index) =>
    answer?.(index) ??
      Response.json({
        messaging_product: "whatsapp",
        contacts: [{ input: "5511999990000", wa_id: "5511999990000" }],
        messages: [{ id: `wamid.TEST${index}` }],
      })
  );
}

/**
 * A channel of the agent written directly (the channels API is the inbound engineer's):
 * credentials are the secret box of `{ phoneNumberId, accessToken, appSecret, verifyToken }`.
 */
export async function seedChannel(
  app: App,
  workspaceId: string,
  agentId: string,
  type: "WHATSAPP" | "API" = "WHATSAPP",
) {
  const phoneNumberId = type === "WHATSAPP" ? `1065${Math.floor(Math.random() * 1e9)}` : null;
  const credentials = type === "WHATSAPP"
    ? app.deps.secrets.seal(JSON.stringify({
      phoneNumberId,
      accessToken: "EAAG-test-access-token",
      appSecret: "app-secret",
      verifyToken: "verify-token",
    }))
    : null;
  return await app.deps.db.channel.create({
    data: { workspaceId, agentId, type, label: `${type} line`, phoneNumberId, credentials },
  });
}

export interface CustomerMessage {
  workspaceId: string;
  agentId: string;
  channelId: string;
  contact?: { externalId: string; name: string };
  content: string;
  type?: "TEXT" | "AUDIO" | "IMAGE" | "DOCUMENT";
  /** Awaited inside the storing transaction, after its last statement (holds it open). */
  beforeCommit?: () => Promise<void>;
}

/** Stores a customer message as inbound does; returns the message and conversation ids. */
export async function customerMessage(app: App, m: CustomerMessage) {
  const { db, events, clock } = app.deps;
  const contactIn = m.contact ?? { externalId: "5511999990000", name: "Maria Silva" };
  return await db.$transaction(async (tx) => {
    const now = clock.now();
    const contact = await tx.contact.upsert({
      where: { workspaceId_externalId: { workspaceId: m.workspaceId, externalId: contactIn.externalId } },
      create: { workspaceId: m.workspaceId, ...contactIn },
      update: {},
    });
    let conversation = await tx.conversation.findFirst({
      where: {
        agentId: m.agentId,
        channelId: m.channelId,
        contactId: contact.id,
        status: { in: ["OPEN", "HUMAN"] },
      },
    });
    const opened = !conversation;
    conversation ??= await tx.conversation.create({
      data: {
        workspaceId: m.workspaceId,
        agentId: m.agentId,
        channelId: m.channelId,
        contactId: contact.id,
        openedAt: now,
        createdAt: now,
      },
    });
    await tx.conversation.update({
      where: { id: conversation.id },
      data: { lastMessageAt: now, lastContactMessageAt: now },
    });
    const message = await tx.message.create({
      data: {
        conversationId: conversation.id,
        channelId: m.channelId,
        direction: "INBOUND",
        senderKind: "CUSTOMER",
        type: m.type ?? "TEXT",
        content: m.content,
        status: "RECEIVED",
        createdAt: now,
      },
    });
    const base = { workspaceId: m.workspaceId, agentId: m.agentId, conversationId: conversation.id };
    if (opened) await events.publish(tx, { ...base, type: "conversation.opened", data: {} });
    await events.publish(tx, {
      ...base,
      type: "message.received",
      data: {
        message: {
          id: message.id,
          type: message.type,
          content: message.content,
          createdAt: now.toISOString(),
        },
      },
    });
    await m.beforeCommit?.();
    return { messageId: message.id, conversationId: conversation.id, contactId: contact.externalId };
  });
}

/** Polls `read` (a database read) until `done` holds; throws after `timeoutMs` (receiver.ts `eventually`). */
export function waitUntil<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 15_000,
): Promise<T> {
  return eventually(async () => {
    const value = await read();
    return done(value) ? value : undefined;
  }, timeoutMs);
}

/** The stored messages of a conversation, oldest first. */
export function messagesOf(app: App, conversationId: string) {
  return app.deps.db.message.findMany({
    where: { conversationId },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
}

/** The events published for a conversation, oldest first (as stored by the webhook listener). */
export async function eventsOf(app: App, conversationId: string) {
  const rows = await app.deps.db.domainEvent.findMany({
    where: { conversationId },
    orderBy: { createdAt: "asc" },
    select: { type: true, payload: true },
  });
  // deno-lint-ignore no-explicit-any
  return rows.map((r) => ({ type: r.type, data: (r.payload as any).data }));
}
