import { z } from "zod";
import { enumType, type JsonObjectType } from "../shared/view.ts";
import { templateChoiceSchema } from "../templates/parameters.ts";
import { text } from "../shared/validation.ts";
import { TEMPLATES } from "./template.ts";

export const AgentStatus = enumType(
  "AgentStatus",
  ["ACTIVE", "PAUSED"],
  "ACTIVE answers; PAUSED stores incoming messages without answering.",
);

export const AgentTemplate = enumType(
  "AgentTemplate",
  TEMPLATES,
  "The template a new agent's system prompt is generated from: SUPORTE (Portuguese, the default) or SUPPORT (English).",
);

export const MessageGroupingTime = enumType(
  "MessageGroupingTime",
  ["FAST", "MEDIUM", "SLOW"],
  "Debounce window for consecutive customer messages.",
);

const optionalText = (max: number) => z.string().max(max).nullable().optional();
const url = z.url({ protocol: /^https?$/, message: "must be an http(s) URL" }).max(2048);

/** Fields a client writes on create. */
const profile = {
  name: text(200),
  template: AgentTemplate.schema.optional(),
  model: z.string().trim().min(1).max(200).optional(),
  jobName: optionalText(200),
  jobSite: url.nullable().optional(),
  jobDescription: optionalText(10_000),
  trainingContext: optionalText(100_000),
  temperature: z.number().min(0).max(2).nullable().optional(),
};

/** Behaviour flags with their defaults (also applied when PUT leaves one out). */
export const FLAG_DEFAULTS = {
  enabledHumanTransfer: true,
  enabledReminder: true,
  splitMessages: true,
  enabledEmoji: true,
  signMessages: false,
  enabledVision: false,
  messageGroupingTime: "MEDIUM" as const,
  maxDailyMessages: null as number | null,
  autoCloseMinutes: 60,
};

const flags = {
  enabledHumanTransfer: z.boolean().optional(),
  enabledReminder: z.boolean().optional(),
  splitMessages: z.boolean().optional(),
  enabledEmoji: z.boolean().optional(),
  signMessages: z.boolean().optional(),
  enabledVision: z.boolean().optional(),
  messageGroupingTime: MessageGroupingTime.schema.optional(),
  maxDailyMessages: z.number().int().min(1).max(100_000).nullable().optional(),
  autoCloseMinutes: z.number().int().min(1).max(10_080).optional(),
  reminderTemplate: templateChoiceSchema.nullable().optional().describe(
    "The WhatsApp template sent as the reminder outside the customer's 24-hour window " +
      "({ name, language, parameters }); null: no reminder then.",
  ),
};

/** An agent's reminderTemplate as read back (its `parameters` as written). */
export const ReminderTemplateType: JsonObjectType = {
  name: "ReminderTemplate",
  description: "The WhatsApp template an agent sends as the reminder outside the customer's 24-hour window.",
  fields: {
    name: { type: "String" },
    language: { type: "String" },
    parameters: {
      type: "JSON",
      description:
        "{ header?, body?, buttons? }, checked against the channel's template when the reminder is due.",
    },
  },
};

/**
 * Fields a client reads back from GET and may send unchanged in a PUT; they are not written by
 * PUT (status and prompt have their own endpoints). Marked read-only: GraphQL's input leaves them
 * out, and OpenAPI says a client need not send them.
 */
const ignored = () => z.unknown().optional().meta({ readOnly: true });
const readOnly = {
  id: ignored(),
  workspaceId: ignored(),
  status: ignored(),
  systemPrompt: ignored(),
  createdAt: ignored(),
  updatedAt: ignored(),
  _count: ignored(),
};

export const createAgentSchema = z.strictObject({ ...profile, ...flags });
export const replaceAgentSchema = z.strictObject({ ...profile, ...flags, ...readOnly });
export const setStatusSchema = z.strictObject({ status: AgentStatus.schema });
export const updatePromptSchema = z.strictObject({
  systemPrompt: text(100_000),
  rationale: z.string().trim().max(10_000),
});
export const revertPromptSchema = z.strictObject({ rationale: z.string().trim().max(10_000).optional() })
  .optional();
