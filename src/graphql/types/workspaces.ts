/** The declared types of src/workspaces: users, members, invites and API tokens. */
import { builder } from "../builder.ts";
import { ident, sql } from "../../shared/sql_fragment.ts";
import { computedField, typePlan } from "../declared.ts";
import { enumOf } from "../common_types.ts";
import { Role } from "../../workspaces/schemas.ts";
import { apiTokenPrivate, invitePrivate, userPrivate } from "../../workspaces/views.ts";

/** A person (never with password or hashes). */
export const User = builder.prismaObject("User", {
  extensions: typePlan({ label: "User", private: userPrivate }),
  fields: (t) => ({
    id: t.exposeID("id"),
    name: t.exposeString("name"),
    email: t.exposeString("email"),
  }),
});

/** The member's user's `column`: in SQL (`t` aliases the membership), or from the membership's user. */
const userColumn = <C extends "name" | "email">(column: C) =>
  computedField({
    sql: (t) => sql`(SELECT u.${ident(column)} FROM "User" u WHERE u.id = ${t}."userId")`,
    row: (member: { user: Record<C, string> }) => member.user[column],
  });

/** A member of the workspace: the user's fields and the role held there. */
export const Member = builder.prismaObject("Membership", {
  name: "Member",
  extensions: typePlan({ label: "Member", workspaceColumn: "workspaceId" }),
  fields: (t) => ({
    id: t.exposeID("userId", { description: "The user's id." }),
    name: t.string({ ...userColumn("name"), select: { user: { select: { name: true } } } }),
    email: t.string({ ...userColumn("email"), select: { user: { select: { email: true } } } }),
    role: t.expose("role", { type: enumOf(Role) }),
    joinedAt: t.expose("createdAt", { type: "DateTime" }),
  }),
});

export const Invite = builder.prismaObject("Invite", {
  extensions: typePlan({ label: "Invite", workspaceColumn: "workspaceId", private: invitePrivate }),
  fields: (t) => ({
    id: t.exposeID("id"),
    email: t.exposeString("email"),
    role: t.expose("role", { type: enumOf(Role) }),
    expiresAt: t.expose("expiresAt", { type: "DateTime" }),
    acceptedAt: t.expose("acceptedAt", { type: "DateTime", nullable: true }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
  }),
});

export const ApiToken = builder.prismaObject("ApiToken", {
  description: "A workspace API token. Its value is only in createApiToken's answer.",
  extensions: typePlan({ label: "API token", workspaceColumn: "workspaceId", private: apiTokenPrivate }),
  fields: (t) => ({
    id: t.exposeID("id"),
    label: t.exposeString("label"),
    prefix: t.exposeString("prefix", {
      description: "The first characters of the value, to recognise it.",
    }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    lastUsedAt: t.expose("lastUsedAt", {
      type: "DateTime",
      nullable: true,
      description: "When it last authenticated a request (recorded at most once a minute).",
    }),
    revokedAt: t.expose("revokedAt", { type: "DateTime", nullable: true }),
    createdBy: t.relation("createdBy", {
      nullable: true,
      description: "The person who created it; null when an API token did or the user was deleted.",
    }),
  }),
});
