/**
 * What the API can do with saved replies, declared once (see shared/capability.ts): every member
 * (and API token) reads them; OWNER and MANAGER write them (saved-replies:write).
 */
import { defineOperation, defineRead } from "../shared/capability.ts";
import { savedReplyView } from "./views.ts";
import { createSavedReplySchema, updateSavedReplySchema } from "./schemas.ts";
import * as service from "./service.ts";

const savedReplyParam = { savedReplyId: "Saved reply" } as const;
const access = { kind: "workspace", action: "saved-replies:write" } as const;

export const savedReplies = defineRead({
  name: "savedReplies",
  summary: "The workspace's saved replies, oldest first.",
  action: "workspace:read",
  params: {},
  from: { view: savedReplyView },
  http: { path: "/api/saved-replies" },
});

export const savedReply = defineRead({
  name: "savedReply",
  summary: "One saved reply.",
  action: "workspace:read",
  params: savedReplyParam,
  from: { view: savedReplyView, idParam: "savedReplyId" },
  http: { path: "/api/saved-replies/{savedReplyId}" },
});

export const createSavedReply = defineOperation({
  name: "createSavedReply",
  summary: "Saves a reply under a shortcut; 409 DUPLICATE_SHORTCUT when the workspace has that shortcut.",
  access,
  params: {},
  input: createSavedReplySchema,
  output: { view: savedReplyView },
  http: { method: "POST", path: "/api/saved-replies", status: 201 },
  run: (ctx, _params, input) => service.createSavedReply(ctx, input),
});

export const updateSavedReply = defineOperation({
  name: "updateSavedReply",
  summary: "Changes the fields given; 409 DUPLICATE_SHORTCUT when another saved reply has the shortcut.",
  access,
  params: savedReplyParam,
  target: "savedReplyId",
  input: updateSavedReplySchema,
  output: { view: savedReplyView },
  http: { method: "PATCH", path: "/api/saved-replies/{savedReplyId}" },
  run: (ctx, { savedReplyId }, input) => service.updateSavedReply(ctx, savedReplyId, input),
});

export const deleteSavedReply = defineOperation({
  name: "deleteSavedReply",
  summary: "Deletes the saved reply.",
  access,
  params: savedReplyParam,
  target: "savedReplyId",
  output: { none: true },
  http: { method: "DELETE", path: "/api/saved-replies/{savedReplyId}", status: 204 },
  run: (ctx, { savedReplyId }) => service.deleteSavedReply(ctx, savedReplyId),
});
