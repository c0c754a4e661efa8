import { z } from "zod";
import { text } from "../shared/validation.ts";

export const roleSchema = z.enum(["OWNER", "MANAGER", "AGENT", "VIEWER"]);
// Deliberately loose (one @, no spaces): `owner@localhost` is a valid address for the first owner.
const email = z.string().trim().toLowerCase().max(320).regex(/^[^\s@]+@[^\s@]+$/, "must be an email address");
const password = z.string().min(8, "must be at least 8 characters").max(1024);

export const loginSchema = z.strictObject({ email, password: z.string().min(1).max(1024) });
export const createWorkspaceSchema = z.strictObject({ name: text(200) });
export const createInviteSchema = z.strictObject({ email, role: roleSchema });
export const acceptInviteSchema = z.strictObject({
  /** For a new user; defaults to the part of the email before the @. */
  name: text(200).optional(),
  password,
});
export const createApiTokenSchema = z.strictObject({ label: text(200) });
export const createUserSchema = z.strictObject({ email, password, name: text(200).optional() });
export const changeMemberRoleSchema = z.strictObject({ role: roleSchema });
export const changePasswordSchema = z.strictObject({
  currentPassword: z.string().min(1).max(1024),
  newPassword: password,
});
