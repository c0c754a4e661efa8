/** The readable type of src/channels (see shared/view.ts). Credentials are never a field. */
import type { Prisma } from "../generated/prisma/client.ts";
import { declaredType, enumType } from "../shared/view.ts";

export const ChannelType = enumType(
  "ChannelType",
  ["WHATSAPP", "API"],
  "WHATSAPP: a WhatsApp Cloud API number; API: a business' own app, posting customer messages to the channel.",
);

/**
 * Where messages for a channel arrive: Meta's webhook, or our API for an API channel. `typeAndId`
 * is `<type>:<id>`, as the planner reads it in SQL (src/graphql/types/channels.ts).
 */
export function inboundUrl(publicUrl: string, typeAndId: string): string {
  const [type, id] = typeAndId.split(":");
  return type === "API" ? `${publicUrl}/api/channels/${id}/messages` : `${publicUrl}/webhooks/whatsapp/${id}`;
}

/** A channel: declared with Pothos (src/graphql/types/channels.ts). */
export const channelView = declaredType("Channel");

/** What a channel's row keeps private: its sealed credentials (write-only). */
export const channelPrivate = { credentials: true } as const satisfies Prisma.ChannelOmit;
