/** The readable types of src/workspaces: members, invites, API tokens and users (see shared/view.ts). */
import type { Prisma } from "../generated/prisma/client.ts";
import { declaredType } from "../shared/view.ts";

/** A person: declared with Pothos (src/graphql/types/workspaces.ts). */
export const userView = declaredType("User");

/** A member of the workspace: declared with Pothos (src/graphql/types/workspaces.ts). */
export const memberView = declaredType("Member");

/** An invite: declared with Pothos (src/graphql/types/workspaces.ts). */
export const inviteView = declaredType("Invite");

/** A workspace API token: declared with Pothos (src/graphql/types/workspaces.ts). */
export const apiTokenView = declaredType("ApiToken");

/** What a user's row keeps private (its type exposes none of it, and no answer holds it). */
export const userPrivate = { passwordHash: true } as const satisfies Prisma.UserOmit;

/** What an invite's row keeps private: the link's token is shown once, by createInvite. */
export const invitePrivate = { tokenHash: true } as const satisfies Prisma.InviteOmit;

/** What an API token's row keeps private: its value is shown once, by createApiToken. */
export const apiTokenPrivate = { tokenHash: true } as const satisfies Prisma.ApiTokenOmit;
