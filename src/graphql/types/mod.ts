/**
 * The types declared with Pothos, by GraphQL name: ../derive.ts uses these refs where a view names
 * a declared type (src/shared/view.ts' declaredView), instead of deriving one.
 */
import type { ObjectRef } from "@pothos/core";
import { PrismaObjectRef } from "@pothos/plugin-prisma";
import { getDatamodel } from "../../generated/pothos-types.ts";
import { provideDeclaredTargets } from "../../shared/view.ts";
import type { builder } from "../builder.ts";
import { Agent, AgentCounts, PromptVersion } from "./agents.ts";
import { Intent } from "./intents.ts";
import { ApiToken, Invite, Member, User } from "./workspaces.ts";
import { Channel } from "./channels.ts";
import { Webhook, WebhookDelivery, WebhookDeliveryAttempt } from "./webhooks.ts";
import { Contact, Conversation, Message } from "./conversations.ts";
import { Approval } from "./approvals.ts";
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
  Channel,
  Conversation,
  ApiToken,
  Agent,
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

// A relation `r` of a declared type leads to the type of the Prisma model its model's field `r` names.
provideDeclaredTargets((typeName, relation) => {
  const ref = DECLARED_TYPES.get(typeName);
  if (!(ref instanceof PrismaObjectRef)) return undefined;
  const field = getDatamodel().datamodel.models[ref.modelName].fields.find((f) =>
    f.name === relation && f.kind === "object"
  );
  return field && byModel.get(field.type);
});
