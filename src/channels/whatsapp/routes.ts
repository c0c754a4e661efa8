/**
 * Meta's calls (decisions.md "Channels (paths)"): the verify handshake and the signed inbound posts
 * of `/webhooks/whatsapp/{channelId}`. A post is checked (signature over the raw bytes, then its
 * shape) and queued as one pg-boss job in one INSERT; it is answered 200 before anything is stored,
 * so no model or network work happens inside Meta's request.
 */
import { Hono } from "hono";
import type { Deps } from "../../context.ts";
import { AppError, badRequest, forbidden, notFound, unauthorized } from "../../shared/errors.ts";
import { decodeUtf8, readBody } from "../../shared/http_body.ts";
import { isRowId } from "../../shared/pagination.ts";
import { openSecrets } from "../service.ts";
import { verifyHandshake, verifyHubSignature } from "./signature.ts";
import { parseWebhookPayload } from "./inbound.ts";
import { type InboundJob, WHATSAPP_INBOUND_QUEUE } from "./process.ts";

async function channelOr404(deps: Deps, channelId: string) {
  const channel = isRowId(channelId)
    ? await deps.db.channel.findFirst({
      where: { id: channelId, type: "WHATSAPP" },
      select: { id: true, phoneNumberId: true, credentials: true },
    })
    : null;
  if (!channel?.credentials) throw notFound("Channel");
  return { ...channel, secrets: openSecrets(deps, channel.credentials) };
}

export function whatsappRoutes(deps: Deps): Hono {
  const r = new Hono();

  r.get("/webhooks/whatsapp/:channelId", async (c) => {
    const channel = await channelOr404(deps, c.req.param("channelId"));
    const challenge = verifyHandshake(new URL(c.req.url).searchParams, channel.secrets.verifyToken ?? "");
    if (challenge === null) throw forbidden("The verify token does not match the channel's.");
    return c.text(challenge, 200);
  });

  r.post("/webhooks/whatsapp/:channelId", async (c) => {
    const channel = await channelOr404(deps, c.req.param("channelId"));
    const raw = await readBody(c.req.raw);
    if (
      !verifyHubSignature(raw, c.req.header("x-hub-signature-256") ?? null, channel.secrets.appSecret ?? "")
    ) {
      throw unauthorized("Missing or wrong X-Hub-Signature-256.");
    }
    const text = decodeUtf8(raw);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new AppError("MALFORMED_JSON", 400, "The body is not valid JSON.");
    }
    const parsed = parseWebhookPayload(json);
    if (!parsed.ok) throw badRequest("The payload is not a WhatsApp messages webhook.", parsed.problems);
    const mine = (r: { phoneNumberId: string }) => r.phoneNumberId === channel.phoneNumberId;
    if (parsed.messages.some(mine) || parsed.statuses.some(mine)) {
      const job: InboundJob = { channelId: channel.id, body: text };
      // One INSERT in its own (implicit) transaction: durable once this answers 200.
      await deps.jobs.enqueue(deps.db, WHATSAPP_INBOUND_QUEUE, [job]);
    }
    return c.body(null, 200);
  });

  return r;
}
