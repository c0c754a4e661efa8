/**
 * The types declared with Pothos, by GraphQL name: ../derive.ts uses these refs where a view names
 * a declared type (src/shared/view.ts' declaredView), instead of deriving one.
 */
import type { ObjectRef } from "@pothos/core";
import type { builder } from "../builder.ts";
import { AgentCounts, PromptVersion } from "./agents.ts";
import { Intent } from "./intents.ts";
import { Invite, Member, User } from "./workspaces.ts";
import { Channel } from "./channels.ts";
import { WebhookDeliveryAttempt } from "./webhooks.ts";
import { Contact, Message } from "./conversations.ts";

type Types = typeof builder.$inferSchemaTypes;

const declared: ObjectRef<Types, unknown>[] = [
  PromptVersion,
  AgentCounts,
  Intent,
  Invite,
  WebhookDeliveryAttempt,
  Contact,
  Message,
  User,
  Member,
  Channel,
];

export const DECLARED_TYPES: ReadonlyMap<string, ObjectRef<Types, unknown>> = new Map(
  declared.map((ref) => [ref.name, ref]),
);
