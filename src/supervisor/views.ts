/** The readable types of src/supervisor: the workspace's supervisor conversation and its messages (see shared/view.ts). */
import { defineView, enumType } from "../shared/view.ts";
import { approvalView } from "../approvals/views.ts";

export const SupervisorRole = enumType(
  "SupervisorRole",
  ["USER", "ASSISTANT", "TOOL"],
  "USER: a person's (or API token's) message; ASSISTANT: the supervisor's answer to it.",
);

export const supervisorMessageView = defineView({
  name: "SupervisorMessage",
  label: "Supervisor message",
  table: "SupervisorMessage",
  fields: {
    id: { type: "ID" },
    role: { type: SupervisorRole },
    content: { type: "String" },
    authorUserId: { type: "ID", nullable: true, description: "The person who wrote a USER message." },
    toolCalls: {
      type: "JSON",
      nullable: true,
      description:
        "What the supervisor did before answering: each tool call with its name, its arguments, and the error it got or the approval it created.",
    },
    inputTokens: {
      type: "Int",
      description: "Prompt tokens of the turn's model calls that were not cache reads or writes.",
    },
    outputTokens: { type: "Int" },
    cacheWriteTokens: { type: "Int" },
    cacheReadTokens: { type: "Int" },
    credits: {
      type: "Float",
      description:
        "What the answer cost in credits, from its token counts and the configured prices; 0 on USER messages.",
    },
    createdAt: { type: "DateTime" },
  },
  relations: {
    approvals: {
      kind: "list",
      view: () => approvalView,
      foreignKey: "supervisorMessageId",
      orderBy: "createdAt",
      description: "The approvals this answer proposed (propose_change), oldest first.",
    },
  },
});

export const supervisorConversationView = defineView({
  name: "SupervisorConversation",
  label: "Supervisor conversation",
  description: "The workspace's one supervisor conversation, shared by its OWNER and MANAGER members.",
  table: "SupervisorConversation",
  workspaceColumn: "workspaceId",
  fields: {
    id: { type: "ID" },
    createdAt: { type: "DateTime" },
  },
  relations: {
    messages: {
      kind: "list",
      view: () => supervisorMessageView,
      foreignKey: "conversationId",
      orderBy: "createdAt",
      description: "Every stored message, oldest first (only the last 30 go to the model).",
    },
  },
});
