/** What the API can do with accounts, workspaces, members, invites and API tokens (see shared/capability.ts). */
import { defineRead } from "../shared/capability.ts";
import { apiTokenView, inviteView, memberView } from "./views.ts";

export const members = defineRead({
  name: "members",
  summary: "The workspace's members, in the order they joined.",
  action: "workspace:read",
  params: {},
  from: { view: memberView },
  http: { path: "/api/workspaces/{workspaceId}/members" },
  rest: { unpaged: true },
});

export const invites = defineRead({
  name: "invites",
  summary: "The workspace's invites, oldest first.",
  action: "members:manage",
  params: {},
  from: { view: inviteView },
  http: { path: "/api/workspaces/{workspaceId}/invites" },
});

export const apiTokens = defineRead({
  name: "apiTokens",
  summary: "The workspace's API tokens, oldest first; never their values.",
  action: "members:manage",
  params: {},
  from: { view: apiTokenView },
  http: { path: "/api/workspaces/{workspaceId}/api-tokens" },
  // REST has always shown who created each token.
  rest: { fields: ["id", "label", "prefix", "createdAt", "lastUsedAt", "revokedAt", "createdBy"] },
});
