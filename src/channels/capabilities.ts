/** What the API can do with an agent's channels, declared once (see shared/capability.ts). */
import { defineOperation, defineRead } from "../shared/capability.ts";
import { agentView } from "../agents/views.ts";
import { channelView } from "./views.ts";
import { messageView } from "../conversations/views.ts";
import { apiMessageSchema, createChannelSchema, updateChannelSchema } from "./schemas.ts";
import * as service from "./service.ts";
import { receiveApiMessage } from "../conversations/receive.ts";

const channelParams = { agentId: "Agent", channelId: "Channel" } as const;

export const channels = defineRead({
  name: "channels",
  summary: "The agent's channels, oldest first (secrets are never shown).",
  action: "workspace:read",
  params: { agentId: "Agent" },
  from: { view: agentView, idParam: "agentId" },
  path: [{ relation: "channels" }],
  http: { path: "/api/agents/{agentId}/channels" },
});

export const createChannel = defineOperation({
  name: "createChannel",
  summary:
    "Adds a channel: WHATSAPP with its Cloud API config (secrets are write-only), or API. `inboundUrl` is where its messages arrive.",
  access: { kind: "workspace", action: "agent:write" },
  params: { agentId: "Agent" },
  input: createChannelSchema,
  output: { view: channelView },
  http: { method: "POST", path: "/api/agents/{agentId}/channels", status: 201 },
  run: (ctx, { agentId }, input) => service.createChannel(ctx, agentId, input),
});

export const updateChannel = defineOperation({
  name: "updateChannel",
  summary: "Changes the label and/or the config keys given; the others keep their stored values.",
  access: { kind: "workspace", action: "agent:write" },
  params: channelParams,
  target: "channelId",
  input: updateChannelSchema,
  output: { view: channelView },
  http: { method: "PATCH", path: "/api/agents/{agentId}/channels/{channelId}" },
  run: (ctx, ids, input) => service.updateChannel(ctx, ids, input),
});

export const deleteChannel = defineOperation({
  name: "deleteChannel",
  summary: "Deletes the channel with its conversations and messages.",
  access: { kind: "workspace", action: "agent:write" },
  params: channelParams,
  target: "channelId",
  output: { none: true },
  http: { method: "DELETE", path: "/api/agents/{agentId}/channels/{channelId}", status: 204 },
  run: (ctx, ids) => service.deleteChannel(ctx, ids),
});

export const postChannelMessage = defineOperation({
  name: "postChannelMessage",
  summary:
    "A customer message on an API channel, stored exactly as a WhatsApp one (contact, conversation, message.received); replies reach the app through events, subscriptions and the read API.",
  access: { kind: "workspace", action: "agent:write" },
  params: { channelId: "Channel" },
  input: apiMessageSchema,
  output: { view: messageView },
  http: { method: "POST", path: "/api/channels/{channelId}/messages", status: 201 },
  run: (ctx, { channelId }, input) => receiveApiMessage(ctx, channelId, input),
});
