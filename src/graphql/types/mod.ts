/**
 * The types declared with Pothos, by GraphQL name: ../derive.ts uses these refs where a capability
 * names a declared type (src/shared/view.ts' declaredType), instead of deriving one.
 */
import type { ObjectRef } from "@pothos/core";
import { PrismaObjectRef } from "@pothos/plugin-prisma";
import { getDatamodel } from "../../generated/pothos-types.ts";
import type { builder } from "../builder.ts";
import { Agent, AgentCounts, PromptVersion } from "./agents.ts";
import { Intent } from "./intents.ts";
import { ApiToken, Invite, Member, User } from "./workspaces.ts";
import { Channel } from "./channels.ts";
import { WhatsAppTemplate } from "./templates.ts";
import { SavedReply } from "./saved_replies.ts";
import { Webhook, WebhookDelivery, WebhookDeliveryAttempt } from "./webhooks.ts";
import { Contact, Conversation, Message } from "./conversations.ts";
import { Approval } from "./approvals.ts";
import { ApprovalReplay, ApprovalReplayCase, ReplayPin } from "./replay.ts";
import { SupervisorConversation, SupervisorMessage } from "./supervisor.ts";

type Types = typeof builder.$inferSchemaTypes;

const declared: ObjectRef<Types, unknown>[] = [
  PromptVersion,
  AgentCounts,
  Intent,
  Invite,
  WebhookDeliveryAttempt,
  WebhookDelivery,
  Webhook,
  Contact,
  Message,
  User,
  Member,
  WhatsAppTemplate,
  SavedReply,
  Channel,
  Conversation,
  ApiToken,
  ReplayPin,
  Agent,
  ApprovalReplayCase,
  ApprovalReplay,
  Approval,
  SupervisorMessage,
  SupervisorConversation,
];

export const DECLARED_TYPES: ReadonlyMap<string, ObjectRef<Types, unknown>> = new Map(
  declared.map((ref) => [ref.name, ref]),
);

/** The declared type of each Prisma model (one each: a relation leads to its model's type). */
const byModel = new Map<string, string>();
for (const ref of declared) {
  if (!(ref instanceof PrismaObjectRef)) continue;
  if (byModel.has(ref.modelName)) throw new Error(`${ref.modelName} is declared twice`);
  byModel.set(ref.modelName, ref.name);
}

/**
 * The declared type a relation `relation` of the declared type `typeName` leads to: the type
 * declared for the Prisma model its model's field `relation` names (what a read's path walks to,
 * known before the schema is built). Undefined when there is none.
 */
export function relatedTypeName(typeName: string, relation: string): string | undefined {
  const ref = DECLARED_TYPES.get(typeName);
  if (!(ref instanceof PrismaObjectRef)) return undefined;
  const field = getDatamodel().datamodel.models[ref.modelName].fields.find((f) =>
    f.name === relation && f.kind === "object"
  );
  return field && byModel.get(field.type);
}
