/** Inputs of the channel capabilities (docs/behaviour.md "Channels and conversations"). */
import { z } from "zod";
import { ChannelType } from "./views.ts";
import { text } from "../shared/validation.ts";
import { whatsappConfigSchema } from "./whatsapp_config.ts";

export const createChannelSchema = z.strictObject({
  type: ChannelType.schema,
  label: text(200),
  config: whatsappConfigSchema.optional().describe("WHATSAPP only (required there)."),
}).superRefine((v, ctx) => {
  if (v.type === "WHATSAPP" && !v.config) {
    ctx.addIssue({ code: "custom", path: ["config"], message: "is required for a WHATSAPP channel" });
  }
  if (v.type === "API" && v.config) {
    ctx.addIssue({ code: "custom", path: ["config"], message: "an API channel has no config" });
  }
});

/** label and/or some config keys (WHATSAPP); keys left out keep their stored values. */
export const updateChannelSchema = z.strictObject({
  label: text(200).optional(),
  config: whatsappConfigSchema.partial().optional(),
});

/** A customer message posted to an API channel. */
export const apiMessageSchema = z.strictObject({
  contact: z.strictObject({
    externalId: z.string().trim().min(1, "must not be empty").max(200),
    name: z.string().trim().max(200).optional(),
  }),
  type: z.literal("TEXT"),
  content: text(10_000),
});
