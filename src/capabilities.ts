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
import * as conversations from "./conversations/capabilities.ts";
import * as handoff from "./conversations/handoff_capabilities.ts";
import * as conversationSubscriptions from "./conversations/subscriptions.ts";
import * as supervisor from "./supervisor/capabilities.ts";

export const CAPABILITIES: readonly Capability[] = [
  ...Object.values(workspaces),
  ...Object.values(agents),
  ...Object.values(intents),
  ...Object.values(webhooks),
  ...Object.values(channels),
  ...Object.values(conversations),
  ...Object.values(handoff),
  ...Object.values(supervisor),
];

/** Every live feed (GraphQL subscriptions, derived by src/graphql/derive.ts). */
export const SUBSCRIPTIONS: readonly SubscriptionCapability[] = [
  ...Object.values(conversationSubscriptions),
];
