/** What the API can do with a WhatsApp channel's templates, declared once (see shared/capability.ts). */
import { defineOperation, defineRead } from "../shared/capability.ts";
import { channelView } from "../channels/views.ts";
import { templateListSchema } from "./schemas.ts";
import { syncTemplatesNow } from "./sync.ts";

export const templates = defineRead({
  name: "templates",
  summary:
    "The channel's WhatsApp templates as its business account last listed them (synced on create, hourly, on demand and from Meta's status webhook), in the order it first listed them.",
  action: "workspace:read",
  params: { channelId: "Channel" },
  from: { view: channelView, idParam: "channelId" },
  path: [{ relation: "templates" }],
  http: { path: "/api/channels/{channelId}/templates" },
  rest: { unpaged: true },
});

export const syncTemplates = defineOperation({
  name: "syncTemplates",
  summary:
    "Syncs the channel's templates from its business account now (every page) and answers the list; 409 NO_BUSINESS_ACCOUNT without config.businessAccountId, 502 TEMPLATE_SYNC_FAILED when WhatsApp's answer fails.",
  access: { kind: "workspace", action: "agent:write" },
  params: { channelId: "Channel" },
  target: "channelId",
  output: { schema: templateListSchema, typeName: "WhatsAppTemplateList" },
  http: { method: "POST", path: "/api/channels/{channelId}/templates/sync" },
  run: (ctx, { channelId }) => syncTemplatesNow(ctx, channelId),
});
