/**
 * Login, workspaces, memberships, invites and API tokens: the workspace administration of spec
 * section 4 and decisions.md.
 */
import type { ActorContext, Deps } from "../context.ts";
import type { Principal, Role } from "../auth/actor.ts";
import { authorize } from "../auth/permissions.ts";
import { dummyHash, hashPassword, verifyPassword } from "../auth/passwords.ts";
import { signUserJwt } from "../auth/jwt.ts";
import { API_TOKEN_PREFIX } from "../auth/authenticate.ts";
import { AppError, conflict, forbidden, notFound, unauthorized } from "../shared/errors.ts";
import { randomToken, sha256Hex } from "../shared/crypto.ts";
import { assertId, parseInput } from "../shared/validation.ts";
import { type Page, pageArgs, parsePage, toPage } from "../shared/pagination.ts";
import type { GraphQuery } from "../shared/graph_query.ts";
import type { Prisma } from "../generated/prisma/client.ts";
import {
  acceptInviteSchema,
  createApiTokenSchema,
  createInviteSchema,
  createUserSchema,
  createWorkspaceSchema,
  loginSchema,
} from "./schemas.ts";

export const INVITE_TTL_MS = 7 * 24 * 3600 * 1000;

export interface MembershipView {
  id: string;
  name: string;
  role: Role;
}
export interface UserView {
  id: string;
  name: string;
  email: string;
}
export interface Session {
  user: UserView;
  token: string;
  workspaces: MembershipView[];
}

async function membershipsOf(deps: Deps, userId: string): Promise<MembershipView[]> {
  const rows = await deps.db.membership.findMany({
    where: { userId },
    orderBy: { createdAt: "asc" },
    select: { role: true, workspace: { select: { id: true, name: true } } },
  });
  return rows.map((m) => ({ id: m.workspace.id, name: m.workspace.name, role: m.role as Role }));
}

async function sessionFor(deps: Deps, user: UserView): Promise<Session> {
  return {
    user: { id: user.id, name: user.name, email: user.email },
    token: await signUserJwt(deps.jwt, user.id),
    workspaces: await membershipsOf(deps, user.id),
  };
}

/** POST /api/auth/login: email and password -> { user, token, workspaces }. 401 INVALID_CREDENTIALS. */
export async function login(deps: Deps, input: unknown): Promise<Session> {
  const { email, password } = parseInput(loginSchema, input);
  const user = await deps.db.user.findUnique({ where: { email } });
  // Verify against a dummy hash for unknown emails so the answer time does not reveal accounts.
  const ok = await verifyPassword(user?.passwordHash ?? await dummyHash(), password);
  if (!user || !ok) throw new AppError("INVALID_CREDENTIALS", 401, "Wrong email or password.");
  return sessionFor(deps, user);
}

/** GET /api/workspaces: the caller's memberships (an API token sees its own workspace). */
export async function listWorkspaces(deps: Deps, principal: Principal): Promise<MembershipView[]> {
  if (principal.kind === "user") return membershipsOf(deps, principal.userId);
  const ws = await deps.db.workspace.findUniqueOrThrow({ where: { id: principal.workspaceId } });
  return [{ id: ws.id, name: ws.name, role: "MANAGER" }];
}

/** POST /api/workspaces: a person creates a workspace and becomes its OWNER. */
export async function createWorkspace(
  deps: Deps,
  principal: Principal,
  input: unknown,
): Promise<MembershipView> {
  if (principal.kind !== "user") throw forbidden("Only a person (login JWT) can create a workspace.");
  const { name } = parseInput(createWorkspaceSchema, input);
  const ws = await deps.db.workspace.create({
    data: { name, memberships: { create: { userId: principal.userId, role: "OWNER" } } },
  });
  return { id: ws.id, name: ws.name, role: "OWNER" };
}

/** DELETE /api/workspaces/{id} (workspace:delete, OWNER): removes it and everything in it. */
export async function deleteWorkspace(ctx: ActorContext): Promise<void> {
  authorize(ctx.actor, "workspace:delete");
  await ctx.db.workspace.delete({ where: { id: ctx.actor.workspaceId } });
}

/** The members of the workspace (workspace:read). */
export async function listMembers(ctx: ActorContext) {
  authorize(ctx.actor, "workspace:read");
  const rows = await ctx.db.membership.findMany({
    where: { workspaceId: ctx.actor.workspaceId },
    orderBy: { createdAt: "asc" },
    select: { role: true, createdAt: true, user: { select: { id: true, name: true, email: true } } },
  });
  return rows.map((m) => ({ ...m.user, role: m.role as Role, joinedAt: m.createdAt }));
}

// ---- invites ----

export interface InviteView {
  id: string;
  email: string;
  role: Role;
  expiresAt: Date;
  acceptedAt: Date | null;
  createdAt: Date;
}
const inviteSelect = {
  id: true,
  email: true,
  role: true,
  expiresAt: true,
  acceptedAt: true,
  createdAt: true,
};

/** POST /api/workspaces/{id}/invites (members:manage; OWNER role needs members:invite-owner). */
export async function createInvite(
  ctx: ActorContext,
  input: unknown,
): Promise<InviteView & { inviteUrl: string }> {
  authorize(ctx.actor, "members:manage");
  const { email, role } = parseInput(createInviteSchema, input);
  if (role === "OWNER") authorize(ctx.actor, "members:invite-owner");
  const token = randomToken(24);
  const invite = await ctx.db.invite.create({
    data: {
      workspaceId: ctx.actor.workspaceId,
      email,
      role,
      tokenHash: sha256Hex(token),
      invitedById: ctx.actor.userId,
      expiresAt: new Date(ctx.clock.now().getTime() + INVITE_TTL_MS),
    },
    select: inviteSelect,
  });
  return { ...(invite as InviteView), inviteUrl: `${ctx.config.publicUrl}/invite/${token}` };
}

/** GET /api/workspaces/{id}/invites (members:manage). */
export async function listInvites(ctx: ActorContext, query: unknown): Promise<Page<InviteView>> {
  authorize(ctx.actor, "members:manage");
  const page = parsePage(query);
  const rows = await ctx.db.invite.findMany({
    where: { workspaceId: ctx.actor.workspaceId },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    select: inviteSelect,
    ...pageArgs(page),
  });
  return toPage(rows as InviteView[], page);
}

/** DELETE /api/workspaces/{id}/invites/{inviteId} (members:manage): withdraws an invite. */
export async function deleteInvite(ctx: ActorContext, inviteId: string): Promise<void> {
  authorize(ctx.actor, "members:manage");
  const { count } = await ctx.db.invite.deleteMany({
    where: { id: assertId(inviteId, "Invite"), workspaceId: ctx.actor.workspaceId },
  });
  if (!count) throw notFound("Invite");
}

async function usableInvite(deps: Deps, token: string) {
  const invite = token.length <= 128
    ? await deps.db.invite.findUnique({
      where: { tokenHash: sha256Hex(token) },
      include: { workspace: { select: { id: true, name: true } } },
    })
    : null;
  if (!invite) throw notFound("Invite");
  if (invite.acceptedAt) throw conflict("INVITE_USED", "This invite has already been accepted.");
  if (invite.expiresAt <= deps.clock.now()) throw conflict("INVITE_EXPIRED", "This invite has expired.");
  return invite;
}

/** GET /invite/{token}: what the invite is for (no authentication; the token is the credential). */
export async function viewInvite(deps: Deps, token: string) {
  const invite = await usableInvite(deps, token);
  const existing = await deps.db.user.findUnique({ where: { email: invite.email }, select: { id: true } });
  return {
    email: invite.email,
    role: invite.role as Role,
    workspace: invite.workspace,
    expiresAt: invite.expiresAt,
    /** true: accepting needs the existing account's password; false: it creates the account. */
    existingUser: existing !== null,
  };
}

/**
 * POST /invite/{token}: accepts once. A new email creates the user (name, password); an existing
 * user proves it with its password and gains the membership. Answers like login.
 */
export async function acceptInvite(deps: Deps, token: string, input: unknown): Promise<Session> {
  const { name, password } = parseInput(acceptInviteSchema, input);
  const invite = await usableInvite(deps, token);
  const existing = await deps.db.user.findUnique({ where: { email: invite.email } });
  if (existing && !(await verifyPassword(existing.passwordHash, password))) {
    throw new AppError("INVALID_CREDENTIALS", 401, "Wrong password for the existing account of this email.");
  }
  const passwordHash = existing ? null : await hashPassword(password);
  const user = await deps.db.$transaction(async (tx) => {
    // The conditional update makes acceptance single-use even under concurrent requests.
    const claimed = await tx.invite.updateMany({
      where: { id: invite.id, acceptedAt: null },
      data: { acceptedAt: deps.clock.now() },
    });
    if (!claimed.count) throw conflict("INVITE_USED", "This invite has already been accepted.");
    const user = existing ?? await tx.user.create({
      data: { email: invite.email, name: name ?? invite.email.split("@")[0], passwordHash: passwordHash! },
    });
    await tx.invite.update({ where: { id: invite.id }, data: { acceptedById: user.id } });
    await tx.membership.upsert({
      where: { userId_workspaceId: { userId: user.id, workspaceId: invite.workspaceId } },
      create: { userId: user.id, workspaceId: invite.workspaceId, role: invite.role },
      update: {},
    });
    return user;
  });
  return sessionFor(deps, user);
}

// ---- API tokens ----

export interface ApiTokenView {
  id: string;
  label: string;
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}
const tokenSelect = {
  id: true,
  label: true,
  prefix: true,
  createdAt: true,
  lastUsedAt: true,
  revokedAt: true,
};

/** POST /api/workspaces/{id}/api-tokens (members:manage): the value is in `token`, this once only. */
export async function createApiToken(
  ctx: ActorContext,
  input: unknown,
): Promise<ApiTokenView & { token: string }> {
  authorize(ctx.actor, "members:manage");
  const { label } = parseInput(createApiTokenSchema, input);
  const token = API_TOKEN_PREFIX + randomToken(32);
  const row = await ctx.db.apiToken.create({
    data: {
      workspaceId: ctx.actor.workspaceId,
      label,
      prefix: token.slice(0, API_TOKEN_PREFIX.length + 6),
      tokenHash: sha256Hex(token),
      createdById: ctx.actor.userId,
    },
    select: tokenSelect,
  });
  return { ...row, token };
}

/** GET /api/workspaces/{id}/api-tokens (members:manage): never includes values. */
export async function listApiTokens(ctx: ActorContext, query: unknown): Promise<Page<ApiTokenView>> {
  authorize(ctx.actor, "members:manage");
  const page = parsePage(query);
  const rows = await ctx.db.apiToken.findMany({
    where: { workspaceId: ctx.actor.workspaceId },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    select: tokenSelect,
    ...pageArgs(page),
  });
  return toPage(rows, page);
}

/** DELETE /api/workspaces/{id}/api-tokens/{tokenId} (members:manage): the token gets 401 at once. */
export async function revokeApiToken(ctx: ActorContext, tokenId: string): Promise<void> {
  authorize(ctx.actor, "members:manage");
  const token = await ctx.db.apiToken.findFirst({
    where: { id: assertId(tokenId, "API token"), workspaceId: ctx.actor.workspaceId },
    select: { id: true, revokedAt: true },
  });
  if (!token) throw notFound("API token");
  if (!token.revokedAt) {
    await ctx.db.apiToken.update({ where: { id: token.id }, data: { revokedAt: ctx.clock.now() } });
  }
}

// ---- bootstrap and admin CLI ----

/** Creates a user (admin CLI and bootstrap). 409 when the email exists. */
export async function createUser(deps: Deps, input: unknown): Promise<UserView> {
  const { email, password, name } = parseInput(createUserSchema, input);
  const existing = await deps.db.user.findUnique({ where: { email }, select: { id: true } });
  if (existing) throw conflict("DUPLICATE", "A user with this email exists.");
  const user = await deps.db.user.create({
    data: { email, name: name ?? email.split("@")[0], passwordHash: await hashPassword(password) },
  });
  return { id: user.id, name: user.name, email: user.email };
}

/** Makes `userId` a member of a new workspace with the given role (admin CLI and bootstrap). */
export function createWorkspaceFor(deps: Deps, userId: string, name: string): Promise<MembershipView> {
  return createWorkspace(deps, { kind: "user", userId }, { name });
}

/** Throws 401 for principals that must be a person. */
export function requireUser(principal: Principal): string {
  if (principal.kind !== "user") throw unauthorized("This call needs a login JWT.");
  return principal.userId;
}

/** GET /api/auth/me: who the credential is, and its workspaces. */
export async function viewer(
  deps: Deps,
  principal: Principal,
): Promise<{ user: UserView | null; workspaces: MembershipView[] }> {
  if (principal.kind === "token") return { user: null, workspaces: await listWorkspaces(deps, principal) };
  const user = await deps.db.user.findUnique({
    where: { id: principal.userId },
    select: { id: true, name: true, email: true },
  });
  if (!user) throw unauthorized("The user of this token no longer exists.");
  return { user, workspaces: await membershipsOf(deps, user.id) };
}

// ---- GraphQL reads ----
// Each spreads the Pothos `query` (selection + take/skip/cursor) after authorizing, and scopes the
// rows to the actor's workspace itself.

const oldestFirst = [{ createdAt: "asc" as const }, { id: "asc" as const }];

/** GraphQL `members` (workspace:read): memberships of the workspace with the selection of `query`. */
export async function findMembersForGraph(
  ctx: ActorContext,
  query: GraphQuery<Prisma.MembershipSelect, Prisma.MembershipInclude, Prisma.MembershipWhereUniqueInput>,
) {
  authorize(ctx.actor, "workspace:read");
  const where = { workspaceId: ctx.actor.workspaceId };
  return await ctx.db.membership.findMany({ ...query, where, orderBy: oldestFirst });
}

/** GraphQL `invites` (members:manage): the workspace's invites with the selection of `query`. */
export async function findInvitesForGraph(
  ctx: ActorContext,
  query: GraphQuery<Prisma.InviteSelect, Prisma.InviteInclude, Prisma.InviteWhereUniqueInput>,
) {
  authorize(ctx.actor, "members:manage");
  const where = { workspaceId: ctx.actor.workspaceId };
  return await ctx.db.invite.findMany({ ...query, where, orderBy: oldestFirst });
}

/** GraphQL `apiTokens` (members:manage): the workspace's tokens (never values), selection of `query`. */
export async function findApiTokensForGraph(
  ctx: ActorContext,
  query: GraphQuery<Prisma.ApiTokenSelect, Prisma.ApiTokenInclude, Prisma.ApiTokenWhereUniqueInput>,
) {
  authorize(ctx.actor, "members:manage");
  const where = { workspaceId: ctx.actor.workspaceId };
  return await ctx.db.apiToken.findMany({ ...query, where, orderBy: oldestFirst });
}
