/**
 * Login, workspaces, members, invites and API tokens: the GraphQL face of src/workspaces. Every
 * resolver is one call to the service REST uses; workspace-scoped fields act in x-workspace-id.
 */
import { builder } from "../builder.ts";
import * as workspaces from "../../workspaces/mod.ts";
import type { MembershipView, Session, UserView } from "../../workspaces/mod.ts";
import { RoleEnum } from "./scalars.ts";
import { scopeCursor } from "../cursors.ts";

/** A person (never with password or hashes). */
const User = builder.objectRef<UserView>("User").implement({
  fields: (t) => ({
    id: t.exposeID("id"),
    name: t.exposeString("name"),
    email: t.exposeString("email"),
  }),
});

/** A workspace as one of the caller's memberships: its id goes in x-workspace-id. */
const WorkspaceMembership = builder.objectRef<MembershipView>("WorkspaceMembership").implement({
  fields: (t) => ({
    id: t.exposeID("id"),
    name: t.exposeString("name"),
    role: t.expose("role", { type: RoleEnum }),
  }),
});

const Viewer = builder.objectRef<{ user: UserView | null; workspaces: MembershipView[] }>("Viewer").implement(
  {
    description: "Who the credential is (user is null for an API token) and its workspaces.",
    fields: (t) => ({
      user: t.expose("user", { type: User, nullable: true }),
      workspaces: t.expose("workspaces", { type: [WorkspaceMembership] }),
    }),
  },
);

const Session = builder.objectRef<Session>("Session").implement({
  description: "The answer of login and acceptInvite: send `token` as Authorization: Bearer.",
  fields: (t) => ({
    user: t.expose("user", { type: User }),
    token: t.exposeString("token"),
    workspaces: t.expose("workspaces", { type: [WorkspaceMembership] }),
  }),
});

/** A member of the workspace: the user's fields and the role held there. */
const Member = builder.prismaObject("Membership", {
  name: "Member",
  select: { id: true },
  fields: (t) => ({
    id: t.field({
      type: "ID",
      description: "The user's id.",
      select: { user: { select: { id: true } } },
      resolve: (m) => m.user.id,
    }),
    name: t.string({ select: { user: { select: { name: true } } }, resolve: (m) => m.user.name }),
    email: t.string({ select: { user: { select: { email: true } } }, resolve: (m) => m.user.email }),
    role: t.expose("role", { type: RoleEnum }),
    joinedAt: t.expose("createdAt", { type: "DateTime" }),
  }),
});

const Invite = builder.prismaObject("Invite", {
  select: { id: true },
  fields: (t) => ({
    id: t.exposeID("id"),
    email: t.exposeString("email"),
    role: t.expose("role", { type: RoleEnum }),
    expiresAt: t.expose("expiresAt", { type: "DateTime" }),
    acceptedAt: t.expose("acceptedAt", { type: "DateTime", nullable: true }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
  }),
});

const ApiToken = builder.prismaObject("ApiToken", {
  description: "A workspace API token. Its value is only in createApiToken's answer.",
  select: { id: true },
  fields: (t) => ({
    id: t.exposeID("id"),
    label: t.exposeString("label"),
    prefix: t.exposeString("prefix", { description: "The first characters of the value, to recognise it." }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    createdBy: t.field({
      type: User,
      nullable: true,
      description: "The person who created it; null when an API token did or the user was deleted.",
      select: { createdBy: { select: { id: true, name: true, email: true } } },
      resolve: (token) => token.createdBy,
    }),
    lastUsedAt: t.expose("lastUsedAt", {
      type: "DateTime",
      nullable: true,
      description: "When it last authenticated a request (recorded at most once a minute).",
    }),
    revokedAt: t.expose("revokedAt", { type: "DateTime", nullable: true }),
  }),
});

const CreatedInvite = builder.objectRef<{ invite: { id: string }; inviteUrl: string }>("CreatedInvite")
  .implement({
    fields: (t) => ({
      invite: t.expose("invite", { type: Invite }),
      inviteUrl: t.exposeString("inviteUrl", { description: "Where the invitee accepts; shown once." }),
    }),
  });

const CreatedApiToken = builder.objectRef<{ apiToken: { id: string }; token: string }>("CreatedApiToken")
  .implement({
    fields: (t) => ({
      apiToken: t.expose("apiToken", { type: ApiToken }),
      token: t.exposeString("token", { description: "The token value, shown this once only." }),
    }),
  });

const MemberConnection = builder.connectionObject({ type: Member, name: "MemberConnection" });
const InviteConnection = builder.connectionObject({ type: Invite, name: "InviteConnection" });
const ApiTokenConnection = builder.connectionObject({ type: ApiToken, name: "ApiTokenConnection" });

builder.queryFields((t) => ({
  viewer: t.field({
    type: Viewer,
    authScopes: { authenticated: true },
    resolve: async (_root, _args, ctx) => workspaces.viewer(ctx.deps, await ctx.principal()),
  }),
  workspaces: t.field({
    type: [WorkspaceMembership],
    authScopes: { authenticated: true },
    resolve: async (_root, _args, ctx) => workspaces.listWorkspaces(ctx.deps, await ctx.principal()),
  }),
  members: t.prismaConnection(
    {
      type: Member,
      cursor: "id",
      authScopes: { member: true },
      resolve: async (query, _root, _args, ctx) => {
        const actor = await ctx.actor();
        return workspaces.findMembersForGraph(
          actor,
          scopeCursor(query, { workspaceId: actor.actor.workspaceId }),
        );
      },
    },
    MemberConnection,
  ),
  invites: t.prismaConnection(
    {
      type: Invite,
      cursor: "id",
      authScopes: { member: true },
      resolve: async (query, _root, _args, ctx) => {
        const actor = await ctx.actor();
        return workspaces.findInvitesForGraph(
          actor,
          scopeCursor(query, { workspaceId: actor.actor.workspaceId }),
        );
      },
    },
    InviteConnection,
  ),
  apiTokens: t.prismaConnection(
    {
      type: ApiToken,
      cursor: "id",
      authScopes: { member: true },
      resolve: async (query, _root, _args, ctx) => {
        const actor = await ctx.actor();
        return workspaces.findApiTokensForGraph(
          actor,
          scopeCursor(query, { workspaceId: actor.actor.workspaceId }),
        );
      },
    },
    ApiTokenConnection,
  ),
}));

const LoginInput = builder.inputType("LoginInput", {
  fields: (t) => ({ email: t.string({ required: true }), password: t.string({ required: true }) }),
});
const CreateWorkspaceInput = builder.inputType("CreateWorkspaceInput", {
  fields: (t) => ({ name: t.string({ required: true }) }),
});
const CreateInviteInput = builder.inputType("CreateInviteInput", {
  fields: (t) => ({ email: t.string({ required: true }), role: t.field({ type: RoleEnum, required: true }) }),
});
const AcceptInviteInput = builder.inputType("AcceptInviteInput", {
  fields: (t) => ({
    name: t.string({ description: "For a new account; defaults to the part of the email before the @." }),
    password: t.string({ required: true, description: "The new account's, or the existing account's." }),
  }),
});
const ChangeMemberRoleInput = builder.inputType("ChangeMemberRoleInput", {
  fields: (t) => ({ role: t.field({ type: RoleEnum, required: true }) }),
});
const ChangePasswordInput = builder.inputType("ChangePasswordInput", {
  fields: (t) => ({
    currentPassword: t.string({ required: true }),
    newPassword: t.string({ required: true, description: "At least 8 characters." }),
  }),
});
const CreateApiTokenInput = builder.inputType("CreateApiTokenInput", {
  fields: (t) => ({ label: t.string({ required: true }) }),
});

builder.mutationFields((t) => ({
  login: t.field({
    type: Session,
    args: { input: t.arg({ type: LoginInput, required: true }) },
    resolve: (_root, { input }, ctx) =>
      workspaces.login(ctx.deps, input, { clientAddress: ctx.clientAddress }),
  }),
  logout: t.boolean({
    description: "Ends the caller's login session: its token answers UNAUTHENTICATED from now on.",
    authScopes: { authenticated: true },
    resolve: async (_root, _args, ctx) => {
      await workspaces.logout(ctx.deps, await ctx.principal());
      return true;
    },
  }),
  changePassword: t.boolean({
    description: "Changes the caller's password and ends every other session of theirs.",
    authScopes: { authenticated: true },
    args: { input: t.arg({ type: ChangePasswordInput, required: true }) },
    resolve: async (_root, { input }, ctx) => {
      await workspaces.changePassword(ctx.deps, await ctx.principal(), input);
      return true;
    },
  }),
  changeMemberRole: t.prismaField({
    type: Member,
    description: "Changes a member's role (by user id) in the x-workspace-id workspace.",
    authScopes: { member: true },
    args: {
      userId: t.arg.id({ required: true }),
      input: t.arg({ type: ChangeMemberRoleInput, required: true }),
    },
    resolve: async (query, _root, { userId, input }, ctx) => {
      const actorCtx = await ctx.actor();
      await workspaces.changeMemberRole(actorCtx, String(userId), input);
      return workspaces.findMemberForGraph(actorCtx, String(userId), query);
    },
  }),
  removeMember: t.id({
    description: "Removes a member (by user id) from the x-workspace-id workspace.",
    authScopes: { member: true },
    args: { userId: t.arg.id({ required: true }) },
    resolve: async (_root, { userId }, ctx) => {
      await workspaces.removeMember(await ctx.actor(), String(userId));
      return userId;
    },
  }),
  acceptInvite: t.field({
    type: Session,
    description: "Accepts an invite; the token from the invite URL is the credential.",
    args: {
      token: t.arg.string({ required: true }),
      input: t.arg({ type: AcceptInviteInput, required: true }),
    },
    resolve: (_root, { token, input }, ctx) =>
      workspaces.acceptInvite(ctx.deps, token, input, { clientAddress: ctx.clientAddress }),
  }),
  createWorkspace: t.field({
    type: WorkspaceMembership,
    authScopes: { authenticated: true },
    args: { input: t.arg({ type: CreateWorkspaceInput, required: true }) },
    resolve: async (_root, { input }, ctx) =>
      workspaces.createWorkspace(ctx.deps, await ctx.principal(), input),
  }),
  deleteWorkspace: t.id({
    description: "Deletes the workspace named by `id` (not x-workspace-id) and everything in it; OWNER only.",
    authScopes: { authenticated: true },
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, { id }, ctx) => {
      await workspaces.deleteWorkspace(await ctx.actorIn(String(id)));
      return id;
    },
  }),
  createInvite: t.field({
    type: CreatedInvite,
    authScopes: { member: true },
    args: { input: t.arg({ type: CreateInviteInput, required: true }) },
    resolve: async (_root, { input }, ctx) => {
      const { inviteUrl, ...invite } = await workspaces.createInvite(await ctx.actor(), input);
      return { invite, inviteUrl };
    },
  }),
  deleteInvite: t.id({
    authScopes: { member: true },
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, { id }, ctx) => {
      await workspaces.deleteInvite(await ctx.actor(), String(id));
      return id;
    },
  }),
  createApiToken: t.field({
    type: CreatedApiToken,
    authScopes: { member: true },
    args: { input: t.arg({ type: CreateApiTokenInput, required: true }) },
    resolve: async (_root, { input }, ctx) => {
      const { token, ...apiToken } = await workspaces.createApiToken(await ctx.actor(), input);
      return { apiToken, token };
    },
  }),
  revokeApiToken: t.id({
    description: "Revokes the token at once; it answers 401 afterwards.",
    authScopes: { member: true },
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, { id }, ctx) => {
      await workspaces.revokeApiToken(await ctx.actor(), String(id));
      return id;
    },
  }),
}));
