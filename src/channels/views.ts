/** The readable type of src/channels (see shared/view.ts). Credentials are never a field. */
import { defineView, enumType } from "../shared/view.ts";

export const ChannelType = enumType(
  "ChannelType",
  ["WHATSAPP", "API"],
  "WHATSAPP: a WhatsApp Cloud API number; API: a business' own app, posting customer messages to the channel.",
);

/** Where messages for a channel arrive: Meta's webhook, or our API for an API channel. */
function inboundUrl(publicUrl: string, typeAndId: string): string {
  const [type, id] = typeAndId.split(":");
  return type === "API" ? `${publicUrl}/api/channels/${id}/messages` : `${publicUrl}/webhooks/whatsapp/${id}`;
}

export const channelView = defineView({
  name: "Channel",
  label: "Channel",
  table: "Channel",
  workspaceColumn: "workspaceId",
  fields: {
    id: { type: "ID" },
    agentId: { type: "ID" },
    type: { type: ChannelType },
    label: { type: "String" },
    phoneNumberId: {
      type: "String",
      nullable: true,
      description: "The WhatsApp phone number id (WHATSAPP).",
    },
    inboundUrl: {
      type: "String",
      description: "Where the channel's messages arrive (configure it as the WhatsApp webhook).",
      sql: (t) => `(${t}.type::text || ':' || ${t}.id)`,
      present: { apply: (ctx, stored) => inboundUrl(ctx.config.publicUrl, String(stored)) },
    },
    createdAt: { type: "DateTime" },
    updatedAt: { type: "DateTime" },
  },
});
