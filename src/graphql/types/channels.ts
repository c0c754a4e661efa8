/** The declared type of src/channels: a channel (credentials are never a field). */
import { builder } from "../builder.ts";
import { sql } from "../../shared/sql_fragment.ts";
import { computedField, typePlan } from "../declared.ts";
import { connectionOf, enumOf } from "../common_types.ts";
import { WhatsAppTemplate } from "./templates.ts";
import { channelPrivate, ChannelType, inboundUrl } from "../../channels/views.ts";

export const Channel = builder.prismaObject("Channel", {
  extensions: typePlan({ label: "Channel", workspaceColumn: "workspaceId", private: channelPrivate }),
  fields: (t) => ({
    id: t.exposeID("id"),
    agentId: t.exposeID("agentId"),
    type: t.expose("type", { type: enumOf(ChannelType) }),
    label: t.exposeString("label"),
    phoneNumberId: t.exposeString("phoneNumberId", {
      nullable: true,
      description: "The WhatsApp phone number id (WHATSAPP).",
    }),
    businessAccountId: t.exposeString("businessAccountId", {
      nullable: true,
      description: "The WhatsApp Business Account (WABA) id its templates are synced from (WHATSAPP).",
    }),
    inboundUrl: t.string({
      description: "Where the channel's messages arrive (configure it as the WhatsApp webhook).",
      // Both read `<type>:<id>`; the app's public URL makes it a URL.
      ...computedField({
        sql: (c) => sql`(${c}.type::text || ':' || ${c}.id)`,
        row: (channel: { type: string; id: string }) => `${channel.type}:${channel.id}`,
        present: { apply: (ctx, stored) => inboundUrl(ctx.config.publicUrl, String(stored)) },
      }),
    }),
    verifiedAt: t.expose("verifiedAt", {
      type: "DateTime",
      nullable: true,
      description: "When Meta's verify handshake last passed (WHATSAPP); null while it has not been seen.",
    }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
    templates: t.relatedConnection(
      "templates",
      {
        description: "Its WhatsApp templates, in the order its business account first listed them.",
        cursor: "id",
        query: { orderBy: [{ createdAt: "asc" }, { id: "asc" }] },
      },
      connectionOf(WhatsAppTemplate),
    ),
  }),
});
