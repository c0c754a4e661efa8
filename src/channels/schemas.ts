/** Inputs of the channel capabilities (docs/behaviour.md "Channels and conversations"). */
import { z } from "zod";
import { ChannelType } from "./views.ts";
import { text } from "../shared/validation.ts";

// A credential: one printable line, as Meta issues them (tokens run to a few hundred characters).
const secret = z.string().trim().min(1, "must not be empty").max(2048)
  .regex(/^[\x21-\x7e]+$/, "must be printable ASCII without spaces");

/** WhatsApp Cloud API settings; every value but phoneNumberId is write-only. */
export const whatsappConfigSchema = z.strictObject({
  phoneNumberId: z.string().trim().regex(/^\d{1,32}$/, "must be the numeric WhatsApp phone number id"),
  accessToken: secret.describe("Graph API token (write-only)."),
  appSecret: secret.describe("App secret that signs Meta's webhook calls (write-only)."),
  verifyToken: secret.describe("Token of the verify handshake (write-only)."),
});

export type WhatsAppConfig = z.output<typeof whatsappConfigSchema>;
/** The sealed part of a WhatsApp channel's config (Channel.credentials, one sealed JSON). */
export type ChannelSecrets = Omit<WhatsAppConfig, "phoneNumberId">;

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
