/**
 * The supervisor chat, declared once (see shared/capability.ts): OWNER and MANAGER (and API
 * tokens, which act as MANAGER) may use it; AGENT and VIEWER get 403. The list of the changes it
 * proposed is the approvals' (src/approvals/).
 */
import { z } from "zod";
import { defineOperation } from "../shared/capability.ts";
import { supervisorConversationView } from "./views.ts";
import { approvalAnswerSchema, chatSchema, supervisorMessageSchema } from "./schemas.ts";
import { creditDaySchema, creditUse, creditUseSchema } from "./credits.ts";
import { getConversation, resetConversation } from "./conversation.ts";
import { chat } from "./turn.ts";

const supervisor = { kind: "workspace", action: "supervisor:use" } as const;

export const supervisorConversation = defineOperation({
  name: "supervisorConversation",
  summary:
    "The workspace's supervisor conversation with every stored message, oldest first; created when absent.",
  access: supervisor,
  params: {},
  output: { view: supervisorConversationView },
  http: { method: "GET", path: "/api/supervisor/conversation" },
  query: true,
  run: (ctx) => getConversation(ctx),
});

export const sendSupervisorMessage = defineOperation({
  name: "sendSupervisorMessage",
  summary:
    "Sends a message to the supervisor: it inspects with the caller's rights and may propose changes, which wait for approval. Answers its reply (with token usage and credits) and the approvals this turn created.",
  access: supervisor,
  params: {},
  input: chatSchema,
  output: {
    schema: z.object({
      reply: supervisorMessageSchema,
      approvals: z.array(approvalAnswerSchema),
    }),
    typeName: "SupervisorChatAnswer",
  },
  http: { method: "POST", path: "/api/supervisor/chat" },
  run: (ctx, _params, input) => chat(ctx, input),
});

export const resetSupervisorConversation = defineOperation({
  name: "resetSupervisorConversation",
  summary:
    "Erases the supervisor conversation's history; the approvals it created stay (without their message).",
  access: supervisor,
  params: {},
  output: { none: true },
  http: { method: "DELETE", path: "/api/supervisor/conversation", status: 204 },
  run: (ctx) => resetConversation(ctx),
});

export const supervisorCredits = defineOperation({
  name: "supervisorCredits",
  summary: "The supervisor's credit use per UTC day, oldest first, days without use as zeros.",
  access: supervisor,
  params: {},
  input: creditUseSchema,
  output: { schema: z.array(creditDaySchema) },
  http: { method: "GET", path: "/api/supervisor/credits" },
  query: true,
  run: (ctx, _params, input) => creditUse(ctx, input),
});
