/**
 * Every capability of the API, from the domain folders that declare them. The REST router, the
 * GraphQL schema and the OpenAPI document are derived from this list (shared/capability.ts).
 */
import type { Capability, SubscriptionCapability } from "./shared/capability.ts";
import * as workspaces from "./workspaces/capabilities.ts";
import * as agents from "./agents/capabilities.ts";
import * as intents from "./intents/capabilities.ts";
import * as webhooks from "./webhooks/capabilities.ts";
import * as channels from "./channels/capabilities.ts";
import * as templates from "./templates/capabilities.ts";
import * as conversations from "./conversations/capabilities.ts";
import * as handoff from "./conversations/handoff_capabilities.ts";
import * as inbox from "./conversations/inbox_capabilities.ts";
import * as conversationSubscriptions from "./conversations/subscriptions.ts";
import * as supervisor from "./supervisor/capabilities.ts";
import * as approvals from "./approvals/capabilities.ts";
import * as approvalSubscriptions from "./approvals/subscriptions.ts";
import * as templateSends from "./templates/send_capabilities.ts";
import * as usage from "./usage/capabilities.ts";
import * as replay from "./replay/capabilities.ts";

export const CAPABILITIES: readonly Capability[] = [
  ...Object.values(workspaces),
  ...Object.values(agents),
  ...Object.values(intents),
  ...Object.values(webhooks),
  ...Object.values(channels),
  ...Object.values(templates),
  ...Object.values(conversations),
  ...Object.values(handoff),
  ...Object.values(inbox),
  ...Object.values(templateSends),
  ...Object.values(supervisor),
  ...Object.values(approvals),
  ...Object.values(usage),
  ...Object.values(replay),
];

/** Every live feed (GraphQL subscriptions, derived by src/graphql/derive.ts). */
export const SUBSCRIPTIONS: readonly SubscriptionCapability[] = [
  ...Object.values(conversationSubscriptions),
  ...Object.values(approvalSubscriptions),
];
