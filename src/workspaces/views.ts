/** The readable types of src/workspaces: members, invites, API tokens and users (see shared/view.ts). */
import { declaredView } from "../shared/view.ts";

/** A person (never with password or hashes): declared with Pothos (src/graphql/types/workspaces.ts). */
export const userView = declaredView("User");

/** A member of the workspace: declared with Pothos (src/graphql/types/workspaces.ts). */
export const memberView = declaredView("Member");

/** An invite: declared with Pothos (src/graphql/types/workspaces.ts). */
export const inviteView = declaredView("Invite");

/** A workspace API token: declared with Pothos (src/graphql/types/workspaces.ts). */
export const apiTokenView = declaredView("ApiToken");
