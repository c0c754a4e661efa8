/**
 * Event webhook registrations of an agent (docs/behaviour.md "Event webhooks and outbound calls").
 * Delivery is the webhook delivery pipeline's job; this is the registry.
 */
import type { z } from "zod";
import type { ActorContext } from "../context.ts";
import type { Prisma } from "../generated/prisma/client.ts";
import { badRequest, notFound } from "../shared/errors.ts";
import { assertId } from "../shared/validation.ts";
import { sealUrlSecrets } from "../shared/url_secrets.ts";
import { findAgentOr404 } from "../agents/service.ts";
import type { createWebhookSchema, updateWebhookSchema } from "./schemas.ts";
import { webhookPrivate } from "./views.ts";

/**
 * A webhook's stored row, less its signing secrets: URL and header values as stored (sealed), which
 * the Webhook type's fields present per role.
 */
export type WebhookRow = Prisma.EventWebhookGetPayload<{ omit: typeof webhookPrivate }>;

/** A Standard Webhooks secret: `whsec_` + base64 of 24 random bytes. */
export function newSigningSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return "whsec_" + btoa(String.fromCharCode(...bytes));
}

async function checkedUrl(ctx: ActorContext, url: string): Promise<void> {
  const refusal = await ctx.outbound.refusal(url);
  if (refusal) throw badRequest(`Invalid input: url: ${refusal}`, [{ path: "url", message: refusal }]);
}

/** Registers a webhook; the answer carries the signing secret, shown this once. */
export async function createWebhook(
  ctx: ActorContext,
  agentId: string,
  data: z.output<typeof createWebhookSchema>,
): Promise<WebhookRow & { signingSecret: string }> {
  await checkedUrl(ctx, data.url);
  await findAgentOr404(ctx, agentId, { id: true });
  const signingSecret = newSigningSecret();
  const row = await ctx.db.eventWebhook.create({
    data: {
      ...data,
      url: sealUrlSecrets(ctx.secrets, data.url),
      agentId,
      signingSecret: ctx.secrets.seal(signingSecret),
      headers: ctx.secrets.sealValues(data.headers),
    },
    omit: webhookPrivate,
  });
  return { ...row, signingSecret };
}

/** A webhook of an agent of the actor's workspace, or 404 (also for other workspaces' ids). */
export async function findWebhookOr404(
  ctx: ActorContext,
  agentId: string,
  webhookId: string,
): Promise<WebhookRow> {
  const row = await ctx.db.eventWebhook.findFirst({
    where: {
      id: assertId(webhookId, "Webhook"),
      agentId: assertId(agentId, "Agent"),
      agent: { workspaceId: ctx.actor.workspaceId },
    },
    omit: webhookPrivate,
  });
  if (!row) throw notFound("Webhook");
  return row;
}

/** Changes the fields given. */
export async function updateWebhook(
  ctx: ActorContext,
  ids: { agentId: string; webhookId: string },
  data: z.output<typeof updateWebhookSchema>,
): Promise<WebhookRow> {
  if (data.url !== undefined) await checkedUrl(ctx, data.url);
  const current = await findWebhookOr404(ctx, ids.agentId, ids.webhookId);
  return await ctx.db.eventWebhook.update({
    where: { id: current.id },
    data: {
      ...data,
      url: data.url && sealUrlSecrets(ctx.secrets, data.url),
      headers: data.headers && ctx.secrets.sealValues(data.headers),
    },
    omit: webhookPrivate,
  });
}

/**
 * How long the secret replaced by a rotation still signs deliveries, next to the new one. Receivers
 * deploy the new secret on their own schedule; a day lets them switch without rejecting a call.
 */
export const PREVIOUS_SECRET_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * A new signing secret, shown once.
 * The replaced secret becomes the previous one, which also signs deliveries for PREVIOUS_SECRET_TTL_MS;
 * rotating again within that time drops the older previous secret for the then-current one.
 */
export async function rotateWebhookSecret(
  ctx: ActorContext,
  ids: { agentId: string; webhookId: string },
): Promise<WebhookRow & { signingSecret: string }> {
  const current = await findWebhookOr404(ctx, ids.agentId, ids.webhookId);
  const signingSecret = newSigningSecret();
  const sealed = ctx.secrets.seal(signingSecret);
  const now = ctx.clock.now();
  const expiresAt = new Date(now.getTime() + PREVIOUS_SECRET_TTL_MS);
  const row = await ctx.db.$transaction(async (tx) => {
    // One statement reads and replaces the current secret (SET sees the row as it was), so two
    // rotations at once cannot both keep the same secret as previous and lose the other new one.
    const updated = await tx.$executeRaw`
      UPDATE "EventWebhook"
         SET "previousSigningSecret" = "signingSecret", "previousSecretExpiresAt" = ${expiresAt},
             "signingSecret" = ${sealed}, "updatedAt" = ${now}
       WHERE id = ${current.id}`;
    if (updated !== 1) throw notFound("Webhook");
    return await tx.eventWebhook.findUniqueOrThrow({ where: { id: current.id }, omit: webhookPrivate });
  });
  return { ...row, signingSecret };
}

export async function deleteWebhook(
  ctx: ActorContext,
  ids: { agentId: string; webhookId: string },
): Promise<void> {
  const current = await findWebhookOr404(ctx, ids.agentId, ids.webhookId);
  await ctx.db.eventWebhook.delete({ where: { id: current.id } });
}
