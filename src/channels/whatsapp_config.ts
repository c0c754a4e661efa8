/**
 * A WhatsApp channel's settings (input of the channel capabilities, ./schemas.ts) and their secret
 * part, stored sealed (./service.ts) and opened by the process' channel cache (./cache.ts).
 */
import { z } from "zod";
import type { SecretBox } from "../shared/secret_box.ts";

// A credential: one printable line, as Meta issues them (tokens run to a few hundred characters).
const secret = z.string().trim().min(1, "must not be empty").max(2048)
  .regex(/^[\x21-\x7e]+$/, "must be printable ASCII without spaces");

/** WhatsApp Cloud API settings; every value but phoneNumberId is write-only. */
export const whatsappConfigSchema = z.strictObject({
  phoneNumberId: z.string().trim().regex(/^\d{1,32}$/, "must be the numeric WhatsApp phone number id"),
  businessAccountId: z.string().trim().regex(/^\d{1,32}$/, "must be the numeric WhatsApp Business Account id")
    .nullable().optional().describe("The WABA id its templates are synced from (optional; null removes it)."),
  accessToken: secret.describe("Graph API token (write-only)."),
  appSecret: secret.describe("App secret that signs Meta's webhook calls (write-only)."),
  verifyToken: secret.describe("Token of the verify handshake (write-only)."),
});

/** A WhatsApp channel's settings, as given. */
export type WhatsAppConfig = z.output<typeof whatsappConfigSchema>;
/** The sealed part of a WhatsApp channel's config (Channel.credentials, one sealed JSON). */
export type ChannelSecrets = Omit<WhatsAppConfig, "phoneNumberId" | "businessAccountId">;

/** The sealed secrets of a channel (Channel.credentials), opened. */
export function openSecrets(deps: { secrets: SecretBox }, sealed: string): Partial<ChannelSecrets> {
  return JSON.parse(deps.secrets.open(sealed)) as Partial<ChannelSecrets>;
}
