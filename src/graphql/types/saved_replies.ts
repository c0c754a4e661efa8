/** The declared type of src/saved_replies: a workspace's saved reply. */
import { builder } from "../builder.ts";
import { typePlan } from "../declared.ts";

export const SavedReply = builder.prismaObject("SavedReply", {
  extensions: typePlan({ label: "Saved reply", workspaceColumn: "workspaceId" }),
  description: 'A text the workspace\'s people insert in "Reply" by typing `/shortcut`.',
  fields: (t) => ({
    id: t.exposeID("id"),
    shortcut: t.exposeString("shortcut", {
      description: "What follows `/`: lowercase letters, digits, `-` and `_`; unique in the workspace.",
    }),
    content: t.exposeString("content"),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
  }),
});
