/** The declared types of src/supervisor: the workspace's supervisor conversation and its messages. */
import { builder } from "../builder.ts";
import { typePlan } from "../declared.ts";
import { enumOf } from "../common_types.ts";
import { SupervisorRole } from "../../supervisor/views.ts";

export const SupervisorMessage = builder.prismaObject("SupervisorMessage", {
  extensions: typePlan({ label: "Supervisor message" }),
  fields: (t) => ({
    id: t.exposeID("id"),
    role: t.expose("role", { type: enumOf(SupervisorRole) }),
    content: t.exposeString("content"),
    authorUserId: t.exposeID("authorUserId", {
      nullable: true,
      description: "The person who wrote a USER message.",
    }),
    toolCalls: t.expose("toolCalls", {
      type: "JSON",
      nullable: true,
      description:
        "What the supervisor did before answering: each tool call with its name, its arguments, and the error it got or the approval it created.",
    }),
    inputTokens: t.exposeInt("inputTokens", {
      description: "Prompt tokens of the turn's model calls that were not cache reads or writes.",
    }),
    outputTokens: t.exposeInt("outputTokens"),
    cacheWriteTokens: t.exposeInt("cacheWriteTokens"),
    cacheReadTokens: t.exposeInt("cacheReadTokens"),
    credits: t.exposeFloat("credits", {
      description:
        "What the answer cost in credits, from its token counts and the configured prices; 0 on USER messages.",
    }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    approvals: t.relation("approvals", {
      description: "The approvals this answer proposed (propose_change), oldest first.",
      query: { orderBy: { createdAt: "asc" } },
    }),
  }),
});

export const SupervisorConversation = builder.prismaObject("SupervisorConversation", {
  description: "The workspace's one supervisor conversation, shared by its OWNER and MANAGER members.",
  extensions: typePlan({ label: "Supervisor conversation", workspaceColumn: "workspaceId" }),
  fields: (t) => ({
    id: t.exposeID("id"),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    messages: t.relation("messages", {
      description: "Every stored message, oldest first (only the last 30 go to the model).",
      query: { orderBy: { createdAt: "asc" } },
    }),
  }),
});
