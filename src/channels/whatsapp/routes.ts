/**
 * Meta's calls: the verify handshake and the signed inbound posts
 * of `/webhooks/whatsapp/{channelId}`. A post is checked (the signature over the raw bytes; its
 * content is never a reason to refuse it) and queued as one pg-boss job per channel it carries
 * records of, in one INSERT; it is answered 200 before anything is stored, so no model or network
 * work happens inside Meta's request. One Meta app may serve several numbers through one callback
 * URL: another number's records go to that number's channel when its app secret signs the post too.
 */
import { Hono } from "hono";
import type { Deps } from "../../context.ts";
import { forbidden, notFound, unauthorized } from "../../shared/errors.ts";
import { readBody } from "../../shared/http_body.ts";
import { isRowId } from "../../shared/pagination.ts";
import type { InboundChannel } from "../cache.ts";
import { verifyHandshake, verifyHubSignature } from "./signature.ts";
import { parseWebhookBody } from "./inbound.ts";
import { type InboundJob, logUnstored, WHATSAPP_INBOUND_QUEUE } from "./process.ts";

/** Meta's bytes as text: invalid UTF-8 becomes U+FFFD rather than costing the post's messages. */
const lenientUtf8 = new TextDecoder("utf-8");
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
function utf8Valid(bytes: Uint8Array): boolean {
  try {
    strictUtf8.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/**
 * The channel as this process remembers it; `passes` says whether the request is fine by it. A
 * remembered channel that refuses is read again before the answer (its secrets or number may have
 * just changed: channels/cache.ts).
 */
async function channelOr404(
  deps: Deps,
  channelId: string,
  passes: (channel: InboundChannel) => boolean,
): Promise<{ channel: InboundChannel; passed: boolean }> {
  let channel = isRowId(channelId) ? await deps.channels.whatsapp(channelId) : null;
  if (channel && !passes(channel)) channel = await deps.channels.fresh(channelId);
  if (!channel) throw notFound("Channel");
  return { channel, passed: passes(channel) };
}

/** The phone number ids of a post's records other than `channel`'s (each once). */
function otherNumbers(parsed: ReturnType<typeof parseWebhookBody>, channel: InboundChannel): Set<string> {
  const numbers = new Set<string>();
  for (const r of [...parsed.messages, ...parsed.statuses]) {
    if (r.phoneNumberId !== null && r.phoneNumberId !== channel.phoneNumberId) numbers.add(r.phoneNumberId);
  }
  return numbers;
}

export function whatsappRoutes(deps: Deps): Hono {
  const r = new Hono();

  r.get("/webhooks/whatsapp/:channelId", async (c) => {
    const params = new URL(c.req.url).searchParams;
    const challengeOf = (channel: InboundChannel) =>
      verifyHandshake(params, channel.secrets.verifyToken ?? "");
    const { channel, passed } = await channelOr404(
      deps,
      c.req.param("channelId"),
      (ch) => challengeOf(ch) !== null,
    );
    if (!passed) throw forbidden("The verify token does not match the channel's.");
    // Recorded so the owner can see that Meta accepted the callback URL and token. Not an update
    // of the row (updatedAt stays): nothing the owner set has changed.
    await deps.db
      .$executeRaw`UPDATE "Channel" SET "verifiedAt" = ${deps.clock.now()} WHERE id = ${channel.id}`;
    return c.text(challengeOf(channel)!, 200);
  });

  r.post("/webhooks/whatsapp/:channelId", async (c) => {
    const channelId = c.req.param("channelId");
    // Unknown ids answer 404 before the body is read.
    if (!isRowId(channelId) || !(await deps.channels.whatsapp(channelId))) throw notFound("Channel");
    const raw = await readBody(c.req.raw);
    const signature = c.req.header("x-hub-signature-256") ?? null;
    const signed = (ch: InboundChannel) => verifyHubSignature(raw, signature, ch.secrets.appSecret ?? "");
    let { channel, passed } = await channelOr404(deps, channelId, signed);
    if (!passed) throw unauthorized("Missing or wrong X-Hub-Signature-256.");
    // Signed by the channel's app secret: answered 200 whatever it carries (Meta resends refused
    // posts); what cannot be stored is logged instead.
    const text = lenientUtf8.decode(raw);
    const parsed = parseWebhookBody(text);
    // A record whose number is unreadable is taken as the channel's: the URL and signature name it.
    const mine = (ch: InboundChannel) => (r: { phoneNumberId: string | null }) =>
      r.phoneNumberId === null || r.phoneNumberId === ch.phoneNumberId;
    // Template status changes name the business account, not a number: the signing channel's.
    const anyMine = (ch: InboundChannel) =>
      parsed.templateUpdates.length > 0 || parsed.messages.some(mine(ch)) || parsed.statuses.some(mine(ch));
    // None of this number's: read the channel again before ignoring them (its number may have just changed).
    if (!anyMine(channel)) {
      ({ channel, passed } = await channelOr404(deps, channelId, (ch) => signed(ch) && anyMine(ch)));
    }
    const jobs: InboundJob[] = passed ? [{ channelId: channel.id, body: text, templates: true }] : [];
    for (const number of otherNumbers(parsed, channel)) {
      const other = await deps.channels.whatsappByNumber(number);
      if (other && other.id !== channel.id && signed(other)) jobs.push({ channelId: other.id, body: text });
      else {deps.logger.debug("whatsapp post: records of a number without a channel of this app", {
          channelId,
        });}
    }
    if (jobs.length) {
      // One INSERT in its own (implicit) transaction: durable once this answers 200. Then stored by
      // this process at once (no fetch; the queue runs here), the jobs kept as the backstop; see
      // whatsapp_inbound.ts. Each job stores only its channel's records.
      await deps.jobs.send(deps.db, WHATSAPP_INBOUND_QUEUE, jobs.map((data) => ({ data })));
    } else {
      // Nothing of this channel's to store: what could not be read is logged here, not by the worker.
      logUnstored(deps.logger, channelId, parsed);
    }
    if (!utf8Valid(raw)) {
      deps.logger.warn("whatsapp post is not valid UTF-8", { channelId, bytes: raw.length });
    }
    return c.body(null, 200);
  });

  return r;
}
