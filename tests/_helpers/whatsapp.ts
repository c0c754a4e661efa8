/** A WhatsApp channel and Meta-shaped signed posts to it, for the inbound tests. */
import type { Client, Reply, TestApp } from "./app.ts";
import { eventually } from "./receiver.ts";
import { hubSignature } from "../../src/channels/whatsapp/signature.ts";

export const APP_SECRET = "test-app-secret-0123456789";
export const VERIFY_TOKEN = "test-verify-token";

export interface TestChannel {
  id: string;
  phoneNumberId: string;
  inboundUrl: string;
}

let phones = 0;

/**
 * A WHATSAPP channel of `agentId` created over REST, with a phone number id unique in the run;
 * `config` adds to or overrides the test credentials (a businessAccountId, another app secret).
 */
export async function createWhatsAppChannel(
  c: Client,
  agentId: string,
  config: Record<string, string> = {},
): Promise<TestChannel & { businessAccountId: string | null }> {
  const phoneNumberId = `${Date.now()}${++phones}`.slice(-15);
  const res = await c.post(`/api/agents/${agentId}/channels`, {
    type: "WHATSAPP",
    label: "Sales",
    config: {
      phoneNumberId,
      accessToken: "test-access-token",
      appSecret: APP_SECRET,
      verifyToken: VERIFY_TOKEN,
      ...config,
    },
  });
  if (res.status !== 201) throw new Error(`channel: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Meta's envelope around one change value of `phoneNumberId`. */
export function envelope(phoneNumberId: string, value: Record<string, unknown>) {
  return {
    object: "whatsapp_business_account",
    entry: [{
      id: "102290129340398",
      changes: [{
        value: {
          messaging_product: "whatsapp",
          metadata: { display_phone_number: "15550783881", phone_number_id: phoneNumberId },
          ...value,
        },
        field: "messages",
      }],
    }],
  };
}

/** One customer message of WhatsApp `type` with its part, from `from`. */
export function customerMessage(
  phoneNumberId: string,
  waId: string,
  type: string,
  part: unknown,
  from = "16505551234",
  name = "Sheena Nelson",
) {
  return envelope(phoneNumberId, {
    contacts: [{ profile: { name }, wa_id: from }],
    messages: [{ from, id: waId, timestamp: "1749416383", type, [type]: part }],
  });
}

export const textMessage = (phoneNumberId: string, waId: string, body: string, from?: string) =>
  customerMessage(phoneNumberId, waId, "text", { body }, from);

/** POSTs `payload` as Meta does: the raw bytes signed with `secret` (null: no signature header). */
export async function postSigned(
  c: Client,
  channelId: string,
  payload: unknown,
  secret: string | null = APP_SECRET,
): Promise<Reply> {
  const raw = typeof payload === "string" ? payload : JSON.stringify(payload);
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (secret !== null) headers["x-hub-signature-256"] = hubSignature(raw, secret);
  return await c.post(`/webhooks/whatsapp/${channelId}`, raw, headers);
}

/** The customer's text `wamid` posted (signed) to `channel`, and the message once stored. */
export async function customerWrites(ta: TestApp, channel: TestChannel, wamid: string, text = "oi") {
  const res = await postSigned(ta.anon, channel.id, textMessage(channel.phoneNumberId, wamid, text));
  if (res.status !== 200) throw new Error(`post ${wamid}: ${res.status}`);
  return await eventually(() =>
    ta.app.deps.db.message.findFirst({ where: { externalId: wamid } }).then((m) => m ?? undefined)
  );
}
