/** The declared types of src/workspaces: users and invites (members and API tokens are still views). */
import { builder } from "../builder.ts";
import { typePlan } from "../declared.ts";
import { enumOf } from "../common_types.ts";
import { Role } from "../../workspaces/schemas.ts";

/** A person (never with password or hashes). */
export const User = builder.prismaObject("User", {
  extensions: typePlan({ label: "User" }),
  fields: (t) => ({
    id: t.exposeID("id"),
    name: t.exposeString("name"),
    email: t.exposeString("email"),
  }),
});

export const Invite = builder.prismaObject("Invite", {
  extensions: typePlan({ label: "Invite", workspaceColumn: "workspaceId" }),
  fields: (t) => ({
    id: t.exposeID("id"),
    email: t.exposeString("email"),
    role: t.expose("role", { type: enumOf(Role) }),
    expiresAt: t.expose("expiresAt", { type: "DateTime" }),
    acceptedAt: t.expose("acceptedAt", { type: "DateTime", nullable: true }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
  }),
});
