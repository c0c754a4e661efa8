import { z } from "zod";
import { enumType } from "../shared/view.ts";

export const Role = enumType("Role", ["OWNER", "MANAGER", "AGENT", "VIEWER"], "A role in a workspace.");
import { text } from "../shared/validation.ts";

// Deliberately loose (one @, no spaces): `owner@localhost` is a valid address for the first owner.
const email = z.string().trim().toLowerCase().max(320).regex(/^[^\s@]+@[^\s@]+$/, "must be an email address");
const password = z.string().min(8, "must be at least 8 characters").max(1024);

export const loginSchema = z.strictObject({ email, password: z.string().min(1).max(1024) });
export const createWorkspaceSchema = z.strictObject({ name: text(200) });
export const createInviteSchema = z.strictObject({ email, role: Role.schema });
export const acceptInviteSchema = z.strictObject({
  name: text(200).optional().describe("For a new account; defaults to the part of the email before the @."),
  password: password.describe("The new account's, or the existing account's."),
});
export const createApiTokenSchema = z.strictObject({ label: text(200) });
export const createUserSchema = z.strictObject({ email, password, name: text(200).optional() });
export const changeMemberRoleSchema = z.strictObject({ role: Role.schema });
export const changePasswordSchema = z.strictObject({
  currentPassword: z.string().min(1).max(1024),
  newPassword: password.describe("At least 8 characters."),
});

// ---- answers that are not rows of a view ----

export const userSchema = z.object({ id: z.string(), name: z.string(), email: z.string() })
  .meta({ id: "User", description: "A person (never with password or hashes)." });

export const membershipSchema = z.object({ id: z.string(), name: z.string(), role: Role.schema }).meta({
  id: "WorkspaceMembership",
  description: "A workspace as one of the caller's memberships: its id goes in x-workspace-id.",
});

export const workspaceSchema = z.object({ id: z.string(), name: z.string(), role: Role.schema }).meta({
  id: "Workspace",
  description:
    "The acting workspace and the caller's role there; in GraphQL also what is read of it as a whole (`usage`).",
});

export const sessionSchema = z.object({
  user: userSchema,
  token: z.string().describe("Send it as Authorization: Bearer."),
  workspaces: z.array(membershipSchema),
}).meta({ id: "Session", description: "The answer of login and invite acceptance." });

export const viewerSchema = z.object({
  user: userSchema.nullable(),
  workspaces: z.array(membershipSchema),
}).meta({
  id: "Viewer",
  description: "Who the credential is (user is null for an API token) and its workspaces.",
});

export const endedSessionsSchema = z.object({
  ended: z.number().int().describe("How many other sessions were ended."),
}).meta({ id: "EndedSessions", description: "The other sessions of the caller that a logout ended." });

export const invitationSchema = z.object({
  email: z.string(),
  role: Role.schema,
  workspace: z.object({ id: z.string(), name: z.string() }).meta({ id: "InvitedWorkspace" }),
  expiresAt: z.iso.datetime(),
  existingUser: z.boolean().describe(
    "true: accepting needs the existing account's password; false: it creates one.",
  ),
}).meta({ id: "Invitation", description: "What an invite is for, as its invitee sees it." });
