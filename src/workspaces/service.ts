/**
 * Login, workspaces, memberships, invites and API tokens: the workspace administration
 * (docs/behaviour.md "Accounts, members and sessions").
 */
import type { z } from "zod";
import type { Prisma } from "../generated/prisma/client.ts";
import type { ActorContext, Deps } from "../context.ts";
import type { Principal, Role } from "../auth/actor.ts";
import { authorize, can } from "../auth/permissions.ts";
import { dummyHash, hashPassword, verifyPassword } from "../auth/passwords.ts";
import { openSession, revokeAllSessions, revokeOtherSessions, revokeSession } from "../auth/sessions.ts";
import { clearPasswordFailures, guardPasswordCheck } from "../auth/rate_limit.ts";
import { API_TOKEN_PREFIX } from "../auth/authenticate.ts";
import { AppError, conflict, forbidden, notFound, unauthorized } from "../shared/errors.ts";
import { randomToken, sha256Hex } from "../shared/crypto.ts";
import { isMissingParent } from "../shared/db_errors.ts";
import { assertId, parseInput } from "../shared/validation.ts";
import type { Tx } from "../db/client.ts";
import { membershipsOfUser } from "./sql.ts";
import {
  type acceptInviteSchema,
  type changeMemberRoleSchema,
  type changePasswordSchema,
  type createApiTokenSchema,
  type createInviteSchema,
  createUserSchema,
  type createWorkspaceSchema,
  type loginSchema,
  type membershipSchema,
  type sessionSchema,
  type userSchema,
  type viewerSchema,
} from "./schemas.ts";
import { apiTokenPrivate, invitePrivate, userPrivate } from "./views.ts";

export const INVITE_TTL_MS = 7 * 24 * 3600 * 1000;

/** A workspace as one of a person's memberships (login's `workspaces`). */
type Membership = z.output<typeof membershipSchema>;
/** A person as a session shows them. */
type SessionUser = z.output<typeof userSchema>;
type Session = z.output<typeof sessionSchema>;

/**
 * One statement: Prisma reads a relation with a query of its own, and a workspace deleted between
 * the two would fail the request (a membership whose required workspace is missing).
 */
async function membershipsOf(deps: Deps, userId: string): Promise<Membership[]> {
  return await membershipsOfUser.rows(deps.db, { userId });
}

/** Opens a login session (a Session row named by the JWT's jti). */
async function sessionFor(deps: Deps, user: SessionUser): Promise<Session> {
  return {
    user: { id: user.id, name: user.name, email: user.email },
    token: await openSession(deps, user.id),
    workspaces: await membershipsOf(deps, user.id),
  };
}

/**
 * POST /api/auth/login: email and password -> { user, token, workspaces }. 401 INVALID_CREDENTIALS;
 * 429 RATE_LIMITED past the abuse limits (src/auth/rate_limit.ts).
 */
export async function login(deps: Deps, { email, password }: z.output<typeof loginSchema>): Promise<Session> {
  const user = await deps.db.user.findUnique({ where: { email } });
  // Verify against a dummy hash for unknown emails so the answer time does not reveal accounts.
  const ok = await guardPasswordCheck(
    deps,
    email,
    async () => await verifyPassword(user?.passwordHash ?? await dummyHash(), password) && user !== null,
  );
  if (!user || !ok) throw new AppError("INVALID_CREDENTIALS", 401, "Wrong email or password.");
  return sessionFor(deps, user);
}

/** POST /api/auth/logout: ends the caller's login session; its JWT answers 401 from now on. */
export async function logout(deps: Deps, principal: Principal): Promise<void> {
  if (principal.kind !== "user") {
    throw forbidden("Only a login session can log out; revoke API tokens instead.");
  }
  await revokeSession(deps, principal.sessionId);
}

/**
 * POST /api/auth/password: verifies the current password (400 INVALID_CURRENT_PASSWORD, counted
 * against the per-email failure limit), sets the new one and revokes every other session of the
 * user; the caller's session stays.
 */
export async function changePassword(
  deps: Deps,
  principal: Principal,
  { currentPassword, newPassword }: z.output<typeof changePasswordSchema>,
): Promise<void> {
  if (principal.kind !== "user") throw forbidden("Only a person (login JWT) can change a password.");
  const user = await deps.db.user.findUnique({ where: { id: principal.userId } });
  if (!user) throw unauthorized("The user of this token no longer exists.");
  const ok = await guardPasswordCheck(
    deps,
    user.email,
    () => verifyPassword(user.passwordHash, currentPassword),
  );
  if (!ok) throw new AppError("INVALID_CURRENT_PASSWORD", 400, "The current password is wrong.");
  const passwordHash = await hashPassword(newPassword);
  await deps.db.$transaction(async (tx) => {
    await tx.user.update({ where: { id: user.id }, data: { passwordHash } });
    await revokeOtherSessions(deps, tx, { userId: user.id, keepSessionId: principal.sessionId });
  });
}

/** GET /api/workspaces: the caller's memberships (an API token sees its own workspace). */
export async function listWorkspaces(deps: Deps, principal: Principal): Promise<Membership[]> {
  if (principal.kind === "user") return membershipsOf(deps, principal.userId);
  const ws = await deps.db.workspace.findUniqueOrThrow({ where: { id: principal.workspaceId } });
  return [{ id: ws.id, name: ws.name, role: "MANAGER" }];
}

/** GET /api/workspaces/{workspaceId}, GraphQL `workspace`: the acting workspace and the caller's role. */
export async function currentWorkspace(ctx: ActorContext): Promise<Membership> {
  const ws = await ctx.db.workspace.findUnique({ where: { id: ctx.actor.workspaceId } });
  // Deleted since the caller's membership was read.
  if (!ws) throw notFound("Workspace");
  return { id: ws.id, name: ws.name, role: ctx.actor.role };
}

/** POST /api/workspaces: a person creates a workspace and becomes its OWNER. */
export async function createWorkspace(
  deps: Deps,
  principal: Principal,
  { name }: z.output<typeof createWorkspaceSchema>,
): Promise<Membership> {
  if (principal.kind !== "user") throw forbidden("Only a person (login JWT) can create a workspace.");
  return await insertWorkspace(deps, principal.userId, name);
}

async function insertWorkspace(deps: Deps, ownerId: string, name: string): Promise<Membership> {
  const ws = await deps.db.workspace.create({
    data: { name, memberships: { create: { userId: ownerId, role: "OWNER" } } },
  }).catch((e) => {
    // A valid JWT of a deleted user: the membership's user is missing. The credential is the problem.
    throw isMissingParent(e) ? unauthorized("The user of this token no longer exists.") : e;
  });
  return { id: ws.id, name: ws.name, role: "OWNER" };
}

/** DELETE /api/workspaces/{id} (workspace:delete, OWNER): removes it and everything in it. */
export async function deleteWorkspace(ctx: ActorContext): Promise<void> {
  await ctx.db.workspace.delete({ where: { id: ctx.actor.workspaceId } });
}

/** A membership with its user: what the Member type shows (its name and email are the user's). */
const memberInclude = { user: { omit: userPrivate } } as const satisfies Prisma.MembershipInclude;
type MemberRow = Prisma.MembershipGetPayload<{ include: typeof memberInclude }>;

const ORDINARY_ROLES: readonly Role[] = ["AGENT", "VIEWER"];

/**
 * Inside a transaction: locks the workspace's OWNER rows, in one order so two requests cannot
 * deadlock (two owners demoting or removing each other are serialized and the second sees the
 * first's change), then re-reads the actor's and the
 * target's roles and applies the rules: OWNER any member; MANAGER only AGENT and VIEWER members, and
 * only to AGENT or VIEWER (403); the last OWNER cannot stop being one (409 LAST_OWNER).
 */
async function lockAndCheck(ctx: ActorContext, tx: Tx, targetUserId: string, newRole: Role | null) {
  const workspaceId = ctx.actor.workspaceId;
  const owners = await tx.$queryRaw<Array<{ userId: string }>>`
    SELECT "userId" FROM "Membership" WHERE "workspaceId" = ${workspaceId} AND "role" = 'OWNER'
    ORDER BY "id" FOR UPDATE`;
  const target = await tx.membership.findUnique({
    where: { userId_workspaceId: { userId: targetUserId, workspaceId } },
    select: { id: true, role: true },
  });
  // The actor's role as of now (it may have changed since the request was authenticated).
  let actorRole: Role | null = ctx.actor.role;
  if (ctx.actor.userId) {
    const me = await tx.membership.findUnique({
      where: { userId_workspaceId: { userId: ctx.actor.userId, workspaceId } },
      select: { role: true },
    });
    actorRole = (me?.role as Role | undefined) ?? null;
  }
  if (!actorRole) throw forbidden("You are not a member of this workspace.");
  authorize({ role: actorRole }, "members:manage");
  if (!target) throw notFound("Member");
  const targetRole = target.role as Role;
  if (
    !can({ role: actorRole }, "members:manage-privileged") &&
    (!ORDINARY_ROLES.includes(targetRole) || (newRole !== null && !ORDINARY_ROLES.includes(newRole)))
  ) {
    throw forbidden(`Your role (${actorRole}) may only change or remove AGENT and VIEWER members.`);
  }
  const staysOwner = newRole === "OWNER";
  if (targetRole === "OWNER" && !staysOwner && owners.every((o) => o.userId === targetUserId)) {
    throw conflict("LAST_OWNER", "A workspace needs at least one OWNER: make someone else OWNER first.");
  }
  return target;
}

/** PATCH /api/workspaces/{id}/members/{userId} (members:manage; see lockAndCheck for the rules). */
export async function changeMemberRole(
  ctx: ActorContext,
  userId: string,
  { role }: z.output<typeof changeMemberRoleSchema>,
): Promise<MemberRow> {
  if (!can(ctx.actor, "members:manage-privileged") && !ORDINARY_ROLES.includes(role)) {
    throw forbidden(`Your role (${ctx.actor.role}) may only give the roles AGENT and VIEWER.`);
  }
  const targetId = assertId(userId, "Member");
  return await ctx.db.$transaction(async (tx) => {
    const target = await lockAndCheck(ctx, tx, targetId, role);
    // A VIEWER attends no conversation: what they held is nobody's now.
    if (role === "VIEWER") await unassignMember(ctx, tx, targetId);
    return await tx.membership.update({ where: { id: target.id }, data: { role }, include: memberInclude });
  });
}

/**
 * Inside `tx`: the member's conversations of the workspace are held by nobody now, each with its
 * `conversation.assigned` (live feeds only).
 */
async function unassignMember(ctx: ActorContext, tx: Tx, userId: string): Promise<void> {
  const rows = await tx.$queryRaw<Array<{ id: string; agentId: string }>>`
    UPDATE "Conversation" SET "assignedUserId" = NULL, "updatedAt" = ${ctx.clock.now()}
     WHERE "workspaceId" = ${ctx.actor.workspaceId} AND "assignedUserId" = ${userId}
    RETURNING id, "agentId"`;
  await ctx.events.publishAll(
    tx,
    rows.map((row) => ({
      type: "conversation.assigned" as const,
      workspaceId: ctx.actor.workspaceId,
      agentId: row.agentId,
      conversationId: row.id,
      data: { assigneeId: null },
    })),
  );
}

/**
 * DELETE /api/workspaces/{id}/members/{userId} (members:manage; see lockAndCheck). The removed
 * user's credentials stop working for this workspace with the next request (403), and the
 * conversations they held are nobody's.
 */
export async function removeMember(ctx: ActorContext, userId: string): Promise<void> {
  const targetId = assertId(userId, "Member");
  await ctx.db.$transaction(async (tx) => {
    const target = await lockAndCheck(ctx, tx, targetId, null);
    await tx.membership.delete({ where: { id: target.id } });
    await unassignMember(ctx, tx, targetId);
  });
}

// ---- invites ----

type InviteRow = Prisma.InviteGetPayload<{ omit: typeof invitePrivate }>;

/**
 * POST /api/workspaces/{id}/invites (members:manage; OWNER role needs members:invite-owner): the
 * invite with the link beside it, shown this once.
 */
export async function createInvite(
  ctx: ActorContext,
  { email, role }: z.output<typeof createInviteSchema>,
): Promise<InviteRow & { inviteUrl: string }> {
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
    omit: invitePrivate,
  });
  return { ...invite, inviteUrl: `${ctx.config.publicUrl}/invite/${token}` };
}

/** DELETE /api/workspaces/{id}/invites/{inviteId} (members:manage): withdraws an invite. */
export async function deleteInvite(ctx: ActorContext, inviteId: string): Promise<void> {
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
export async function acceptInvite(
  deps: Deps,
  token: string,
  { name, password }: z.output<typeof acceptInviteSchema>,
): Promise<Session> {
  const invite = await usableInvite(deps, token);
  const existing = await deps.db.user.findUnique({ where: { email: invite.email } });
  if (
    existing &&
    !(await guardPasswordCheck(deps, existing.email, () => verifyPassword(existing.passwordHash, password)))
  ) {
    throw new AppError("INVALID_CREDENTIALS", 401, "Wrong password for the existing account of this email.");
  }
  const passwordHash = existing ? null : await hashPassword(password);
  const user = await deps.db.$transaction(async (tx) => {
    // The workspace row first, as DELETE workspace locks it before its invites: taking the invite
    // first and the workspace later (the membership's foreign key) deadlocks with that delete.
    await tx.$queryRaw`SELECT 1 FROM "Workspace" WHERE id = ${invite.workspaceId} FOR KEY SHARE`;
    // The conditional update makes acceptance single-use even under concurrent requests.
    const claimed = await tx.invite.updateMany({
      where: { id: invite.id, acceptedAt: null },
      data: { acceptedAt: deps.clock.now() },
    });
    if (!claimed.count) {
      // Not claimable: accepted meanwhile (409), or withdrawn or its workspace deleted (404).
      const still = await tx.invite.findUnique({ where: { id: invite.id }, select: { id: true } });
      throw still ? conflict("INVITE_USED", "This invite has already been accepted.") : notFound("Invite");
    }
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

/** A token with the person who created it (the ApiToken type's `createdBy`). */
const tokenInclude = { createdBy: { omit: userPrivate } } as const satisfies Prisma.ApiTokenInclude;
type ApiTokenRow = Prisma.ApiTokenGetPayload<{ omit: typeof apiTokenPrivate; include: typeof tokenInclude }>;

/** POST /api/workspaces/{id}/api-tokens (members:manage): the value is in `token`, this once only. */
export async function createApiToken(
  ctx: ActorContext,
  { label }: z.output<typeof createApiTokenSchema>,
): Promise<ApiTokenRow & { token: string }> {
  const token = API_TOKEN_PREFIX + randomToken(32);
  const row = await ctx.db.apiToken.create({
    data: {
      workspaceId: ctx.actor.workspaceId,
      label,
      prefix: token.slice(0, API_TOKEN_PREFIX.length + 6),
      tokenHash: sha256Hex(token),
      createdById: ctx.actor.userId,
    },
    omit: apiTokenPrivate,
    include: tokenInclude,
  });
  return { ...row, token };
}

/** DELETE /api/workspaces/{id}/api-tokens/{tokenId} (members:manage): the token gets 401 at once. */
export async function revokeApiToken(ctx: ActorContext, tokenId: string): Promise<void> {
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
export async function createUser(deps: Deps, input: unknown): Promise<SessionUser> {
  const { email, password, name } = parseInput(createUserSchema, input);
  const existing = await deps.db.user.findUnique({ where: { email }, select: { id: true } });
  if (existing) throw conflict("DUPLICATE", "A user with this email exists.");
  const user = await deps.db.user.create({
    data: { email, name: name ?? email.split("@")[0], passwordHash: await hashPassword(password) },
  });
  return { id: user.id, name: user.name, email: user.email };
}

/**
 * Admin CLI `reset-password`: a new random password for the user of `email`, whose every login
 * session is revoked in the same transaction and whose failed attempts are forgotten (an owner who
 * locked the account out by guessing can log in at once). 404 for an unknown email. The password is
 * returned once and stored only as its hash.
 */
export async function resetPassword(
  deps: Deps,
  email: string,
): Promise<{ user: SessionUser; password: string; revokedSessions: number }> {
  const address = email.trim().toLowerCase();
  const user = await deps.db.user.findUnique({ where: { email: address } });
  if (!user) throw notFound(`A user with email ${JSON.stringify(address)}`);
  const password = randomToken(12);
  const passwordHash = await hashPassword(password);
  const revokedSessions = await deps.db.$transaction(async (tx) => {
    await tx.user.update({ where: { id: user.id }, data: { passwordHash } });
    return await revokeAllSessions(deps, tx, user.id);
  });
  await clearPasswordFailures(deps, address);
  return { user: { id: user.id, name: user.name, email: user.email }, password, revokedSessions };
}

/** Makes `userId` a member of a new workspace with the given role (admin CLI and bootstrap). */
export function createWorkspaceFor(deps: Deps, userId: string, name: string): Promise<Membership> {
  return insertWorkspace(deps, userId, name);
}

/** GET /api/auth/me: who the credential is, and its workspaces. */
export async function viewer(
  deps: Deps,
  principal: Principal,
): Promise<z.output<typeof viewerSchema>> {
  if (principal.kind === "token") return { user: null, workspaces: await listWorkspaces(deps, principal) };
  const user = await deps.db.user.findUnique({
    where: { id: principal.userId },
    select: { id: true, name: true, email: true },
  });
  if (!user) throw unauthorized("The user of this token no longer exists.");
  return { user, workspaces: await membershipsOf(deps, user.id) };
}
