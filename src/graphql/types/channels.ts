/** The declared type of src/channels: a channel (credentials are never a field). */
import { builder } from "../builder.ts";
import { fieldPlan, typePlan } from "../declared.ts";
import { enumOf } from "../common_types.ts";
import { ChannelType, inboundUrl } from "../../channels/views.ts";

export const Channel = builder.prismaObject("Channel", {
  extensions: typePlan({ label: "Channel", workspaceColumn: "workspaceId" }),
  fields: (t) => ({
    id: t.exposeID("id"),
    agentId: t.exposeID("agentId"),
    type: t.expose("type", { type: enumOf(ChannelType) }),
    label: t.exposeString("label"),
    phoneNumberId: t.exposeString("phoneNumberId", {
      nullable: true,
      description: "The WhatsApp phone number id (WHATSAPP).",
    }),
    inboundUrl: t.string({
      description: "Where the channel's messages arrive (configure it as the WhatsApp webhook).",
      // The planner reads `<type>:<id>` and the app's public URL makes it a URL, as this resolver does.
      extensions: fieldPlan({
        sql: (c) => `(${c}.type::text || ':' || ${c}.id)`,
        present: { apply: (ctx, stored) => inboundUrl(ctx.config.publicUrl, String(stored)) },
      }),
      resolve: (channel, _args, ctx) =>
        inboundUrl(ctx.deps.config.publicUrl, `${channel.type}:${channel.id}`),
    }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
  }),
});
