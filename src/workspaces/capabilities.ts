/** What the API can do with accounts, workspaces, members, invites and API tokens (see shared/capability.ts). */
import { z } from "zod";
import type { Deps } from "../context.ts";
import type { Action } from "../auth/permissions.ts";
import { countAddressAttempt } from "../auth/rate_limit.ts";
import { defineOperation, defineRead } from "../shared/capability.ts";
import { apiTokenView, inviteView, memberView } from "./views.ts";
import * as service from "./service.ts";
import {
  acceptInviteSchema,
  changeMemberRoleSchema,
  changePasswordSchema,
  createApiTokenSchema,
  createInviteSchema,
  createWorkspaceSchema,
  endedSessionsSchema,
  invitationSchema,
  loginSchema,
  membershipSchema,
  sessionSchema,
  viewerSchema,
  workspaceSchema,
} from "./schemas.ts";

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
});

const workspaceAccess = (action: Action) => ({ kind: "workspace", action }) as const;
/** Login and invite acceptance count every attempt per client address, well-formed or not. */
const countAttempt = (ctx: { deps: Deps; clientAddress: string | null }) =>
  countAddressAttempt(ctx.deps, ctx.clientAddress);

export const login = defineOperation({
  name: "login",
  summary: "Email and password: a login JWT with the user and their workspaces.",
  access: { kind: "public" },
  params: {},
  guard: countAttempt,
  input: loginSchema,
  output: { schema: sessionSchema },
  http: { method: "POST", path: "/api/auth/login" },
  run: (ctx, _params, input) => service.login(ctx.deps, input),
});

export const logout = defineOperation({
  name: "logout",
  summary: "Ends the caller's login session: its token answers 401 from now on.",
  access: { kind: "principal" },
  params: {},
  output: { none: true },
  http: { method: "POST", path: "/api/auth/logout", status: 204 },
  run: (ctx) => service.logout(ctx.deps, ctx.principal),
});

export const changePassword = defineOperation({
  name: "changePassword",
  summary: "Changes the caller's password and ends every other session of theirs.",
  access: { kind: "principal" },
  params: {},
  input: changePasswordSchema,
  output: { none: true },
  http: { method: "POST", path: "/api/auth/password", status: 204 },
  run: (ctx, _params, input) => service.changePassword(ctx.deps, ctx.principal, input),
});

export const logoutOtherSessions = defineOperation({
  name: "logoutOtherSessions",
  summary:
    "Ends every other login session of the caller (other browsers and devices); this one stays. Answers how many ended.",
  access: { kind: "principal" },
  params: {},
  output: { schema: endedSessionsSchema },
  http: { method: "POST", path: "/api/auth/logout-others" },
  run: (ctx) => service.logoutOtherSessions(ctx.deps, ctx.principal),
});

export const viewer = defineOperation({
  name: "viewer",
  summary: "Who the credential is (user is null for an API token) and its workspaces.",
  access: { kind: "principal" },
  params: {},
  query: true,
  output: { schema: viewerSchema },
  http: { method: "GET", path: "/api/auth/me" },
  run: (ctx) => service.viewer(ctx.deps, ctx.principal),
});

export const workspaces = defineOperation({
  name: "workspaces",
  summary: "The caller's memberships, in the shape of login's `workspaces`.",
  access: { kind: "principal" },
  params: {},
  query: true,
  output: { schema: z.array(membershipSchema) },
  http: { method: "GET", path: "/api/workspaces" },
  run: (ctx) => service.listWorkspaces(ctx.deps, ctx.principal),
});

export const workspace = defineOperation({
  name: "workspace",
  summary: "The acting workspace: its id, its name and the caller's role there (an API token: MANAGER).",
  access: workspaceAccess("workspace:read"),
  params: {},
  query: true,
  output: { schema: workspaceSchema },
  http: { method: "GET", path: "/api/workspaces/{workspaceId}" },
  run: (ctx) => service.currentWorkspace(ctx),
});

export const createWorkspace = defineOperation({
  name: "createWorkspace",
  summary: "A person creates a workspace and becomes its OWNER.",
  access: { kind: "principal" },
  params: {},
  input: createWorkspaceSchema,
  output: { schema: membershipSchema },
  http: { method: "POST", path: "/api/workspaces", status: 201 },
  run: (ctx, _params, input) => service.createWorkspace(ctx.deps, ctx.principal, input),
});

export const deleteWorkspace = defineOperation({
  name: "deleteWorkspace",
  summary: "Deletes the workspace and everything in it; OWNER only.",
  access: workspaceAccess("workspace:delete"),
  params: { workspaceId: "Workspace" },
  target: "workspaceId",
  output: { none: true },
  http: { method: "DELETE", path: "/api/workspaces/{workspaceId}", status: 204 },
  run: (ctx) => service.deleteWorkspace(ctx),
});

export const changeMemberRole = defineOperation({
  name: "changeMemberRole",
  summary:
    "Changes a member's role (by user id). A MANAGER changes only AGENT and VIEWER members, to AGENT or VIEWER; the last OWNER stays OWNER (409 LAST_OWNER).",
  access: workspaceAccess("members:manage"),
  params: { userId: "Member" },
  input: changeMemberRoleSchema,
  output: { view: memberView },
  http: { method: "PATCH", path: "/api/workspaces/{workspaceId}/members/{userId}" },
  run: (ctx, { userId }, input) => service.changeMemberRole(ctx, userId, input),
});

export const removeMember = defineOperation({
  name: "removeMember",
  summary: "Removes a member (by user id); their credentials stop working for this workspace at once.",
  access: workspaceAccess("members:manage"),
  params: { userId: "Member" },
  output: { none: true },
  http: { method: "DELETE", path: "/api/workspaces/{workspaceId}/members/{userId}", status: 204 },
  run: (ctx, { userId }) => service.removeMember(ctx, userId),
});

export const createInvite = defineOperation({
  name: "createInvite",
  summary: "Invites someone by email with a role (only an OWNER invites an OWNER); the link is shown once.",
  access: workspaceAccess("members:manage"),
  params: {},
  input: createInviteSchema,
  output: {
    view: inviteView,
    extra: z.object({ inviteUrl: z.string().describe("Where the invitee accepts; shown once.") }),
    nested: { name: "CreatedInvite", rowKey: "invite" },
  },
  http: { method: "POST", path: "/api/workspaces/{workspaceId}/invites", status: 201 },
  run: (ctx, _params, input) => service.createInvite(ctx, input),
});

export const deleteInvite = defineOperation({
  name: "deleteInvite",
  summary: "Withdraws an invite.",
  access: workspaceAccess("members:manage"),
  params: { inviteId: "Invite" },
  target: "inviteId",
  output: { none: true },
  http: { method: "DELETE", path: "/api/workspaces/{workspaceId}/invites/{inviteId}", status: 204 },
  run: (ctx, { inviteId }) => service.deleteInvite(ctx, inviteId),
});

export const createApiToken = defineOperation({
  name: "createApiToken",
  summary: "A workspace API token (acting as MANAGER); its value is in `token`, shown this once.",
  access: workspaceAccess("members:manage"),
  params: {},
  input: createApiTokenSchema,
  output: {
    view: apiTokenView,
    extra: z.object({ token: z.string().describe("The token value, shown this once only.") }),
    nested: { name: "CreatedApiToken", rowKey: "apiToken" },
  },
  http: { method: "POST", path: "/api/workspaces/{workspaceId}/api-tokens", status: 201 },
  run: (ctx, _params, input) => service.createApiToken(ctx, input),
});

export const revokeApiToken = defineOperation({
  name: "revokeApiToken",
  summary: "Revokes the token at once; it answers 401 afterwards.",
  access: workspaceAccess("members:manage"),
  params: { tokenId: "API token" },
  target: "tokenId",
  output: { none: true },
  http: { method: "DELETE", path: "/api/workspaces/{workspaceId}/api-tokens/{tokenId}", status: 204 },
  run: (ctx, { tokenId }) => service.revokeApiToken(ctx, tokenId),
});

export const invitation = defineOperation({
  name: "invitation",
  summary: "What an invite is for; the token from the invite link is the credential.",
  access: { kind: "public" },
  params: { token: "Invite" },
  query: true,
  output: { schema: invitationSchema },
  http: { method: "GET", path: "/invite/{token}" },
  run: (ctx, { token }) => service.viewInvite(ctx.deps, token),
});

export const acceptInvite = defineOperation({
  name: "acceptInvite",
  summary:
    "Accepts an invite once: a new email creates the account (name, password), an existing account proves itself with its password. Answers like login.",
  access: { kind: "public" },
  params: { token: "Invite" },
  guard: countAttempt,
  input: acceptInviteSchema,
  output: { schema: sessionSchema },
  http: { method: "POST", path: "/invite/{token}" },
  run: (ctx, { token }, input) => service.acceptInvite(ctx.deps, token, input),
});
