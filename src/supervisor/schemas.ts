/** Inputs and answers of the supervisor's capabilities (zod; see shared/capability.ts). */
import { z } from "zod";
import { text } from "../shared/validation.ts";

export const chatSchema = z.strictObject({
  message: text(8_000).describe("What you ask the supervisor, in plain language."),
});

/** An answer as the chat returns it; the GraphQL type and OpenAPI schema are the view's. */
export const supervisorMessageSchema = z.object({
  id: z.string(),
  role: z.enum(["USER", "ASSISTANT", "TOOL"]),
  content: z.string(),
  authorUserId: z.string().nullable(),
  toolCalls: z.unknown(),
  inputTokens: z.int(),
  outputTokens: z.int(),
  cacheWriteTokens: z.int(),
  cacheReadTokens: z.int(),
  credits: z.number(),
  createdAt: z.string(),
}).meta({ id: "SupervisorMessage" });

/** An approval as the chat returns it; the GraphQL type and OpenAPI schema are the Approval view's. */
export const approvalAnswerSchema = z.object({
  id: z.string(),
  tool: z.string(),
  targetType: z.string(),
  targetId: z.string().nullable(),
  agentId: z.string().nullable(),
  before: z.unknown(),
  after: z.unknown(),
  rationale: z.string(),
  status: z.string(),
  supervisorMessageId: z.string().nullable(),
  proposedBy: z.string().nullable(),
  decidedBy: z.string().nullable(),
  decidedAt: z.string().nullable(),
  expiresAt: z.string(),
  error: z.string().nullable(),
  createdAt: z.string(),
}).meta({ id: "Approval" });
