/**
 * Domain events published by tests themselves, with the rows they name written directly: a live
 * feed or a webhook is tested without running the code that would publish them.
 */
import type { App } from "../../src/app.ts";
import type { DomainEvent } from "../../src/shared/events.ts";
import type { TestApp } from "./app.ts";
import { QUEUED_TRANSACTION } from "../../src/db/transaction.ts";

/**
 * Publishes `event` in a transaction of its own; returns the event's id once committed. Tests
 * publish bursts larger than the pool: each waits for a connection as a queued service does
 * (Prisma's default gives up after 2 s, which a loaded CI machine reached).
 */
export function publish(app: App, event: DomainEvent): Promise<string> {
  return app.deps.db.$transaction((tx) => app.deps.events.publish(tx, event), QUEUED_TRANSACTION);
}

/** A WhatsApp channel, a contact and an OPEN conversation of the agent, written directly. */
export async function seedConversation(app: App, workspaceId: string, agentId: string) {
  const db = app.deps.db;
  const channel = await db.channel.create({ data: { workspaceId, agentId, label: "Sales line" } });
  const contact = await db.contact.create({
    data: { workspaceId, externalId: "5511999990000", name: "Maria Silva" },
  });
  const conversation = await db.conversation.create({
    data: { workspaceId, agentId, channelId: channel.id, contactId: contact.id },
  });
  return { channel, contact, conversation };
}

/** A customer message stored in the seeded conversation, with its `message.received` (not published). */
export async function storeCustomerMessage(
  app: App,
  seeded: Awaited<ReturnType<typeof seedConversation>>,
  content: string,
): Promise<{ id: string; event: DomainEvent }> {
  const { conversation } = seeded;
  const message = await app.deps.db.message.create({
    data: {
      conversationId: conversation.id,
      channelId: conversation.channelId,
      direction: "INBOUND",
      senderKind: "CUSTOMER",
      content,
    },
  });
  return {
    id: message.id,
    event: {
      type: "message.received",
      workspaceId: conversation.workspaceId,
      agentId: conversation.agentId,
      conversationId: conversation.id,
      data: {
        message: { id: message.id, type: "TEXT", content, createdAt: message.createdAt.toISOString() },
      },
    },
  };
}

/** A customer message stored in the seeded conversation and its `message.received` published; its id. */
export async function addCustomerMessage(
  app: App,
  seeded: Awaited<ReturnType<typeof seedConversation>>,
  content: string,
): Promise<string> {
  const { id, event } = await storeCustomerMessage(app, seeded, content);
  await publish(app, event);
  return id;
}

/** A workspace with its owner, an agent and a conversation of it (seedConversation): a feed to watch. */
export async function seedFeed(t: TestApp) {
  const { workspaceId, owner } = await t.seed.workspace();
  const agent = await t.seed.agent(owner.client);
  const seeded = await seedConversation(t.app, workspaceId, agent.id);
  return { workspaceId, owner, agent, seeded };
}
