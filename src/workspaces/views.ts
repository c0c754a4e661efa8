/** The readable types of src/workspaces: members, invites, API tokens and users (see shared/view.ts). */
import { declaredView, defineView } from "../shared/view.ts";

/** A person (never with password or hashes): declared with Pothos (src/graphql/types/workspaces.ts). */
export const userView = declaredView("User");

/** A member of the workspace: declared with Pothos (src/graphql/types/workspaces.ts). */
export const memberView = declaredView("Member");

/** An invite: declared with Pothos (src/graphql/types/workspaces.ts). */
export const inviteView = declaredView("Invite");

/** A workspace API token. Its value is only in the answer that creates it. */
export const apiTokenView = defineView({
  name: "ApiToken",
  label: "API token",
  table: "ApiToken",
  workspaceColumn: "workspaceId",
  description: "A workspace API token. Its value is only in createApiToken's answer.",
  fields: {
    id: { type: "ID" },
    label: { type: "String" },
    prefix: { type: "String", description: "The first characters of the value, to recognise it." },
    createdAt: { type: "DateTime" },
    lastUsedAt: {
      type: "DateTime",
      nullable: true,
      description: "When it last authenticated a request (recorded at most once a minute).",
    },
    revokedAt: { type: "DateTime", nullable: true },
  },
  relations: {
    createdBy: {
      kind: "object",
      view: () => userView,
      localKey: "createdById",
      nullable: true,
      description: "The person who created it; null when an API token did or the user was deleted.",
    },
  },
});
