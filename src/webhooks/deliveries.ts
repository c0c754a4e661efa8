/**
 * The delivery log of a webhook, its test event and manual redelivery (docs/behaviour.md
 * "Event webhooks and outbound calls"). Sending itself is src/webhooks/delivery.ts, run by the delivery jobs.
 */
import type { ActorContext } from "../context.ts";
import type { Tx } from "../db/client.ts";
import type { Prisma } from "../generated/prisma/client.ts";
import { conflict, notFound } from "../shared/errors.ts";
import { assertId } from "../shared/validation.ts";
import { findWebhookOr404 } from "./service.ts";
import { type DeliveryJob, WEBHOOK_DELIVERY_QUEUE } from "./delivery.ts";
/** What the WebhookDelivery type shows beside the row: its event's type and every attempt, oldest first. */
const deliveryInclude = {
  event: { select: { type: true } },
  attempts: { orderBy: { number: "asc" } },
} as const satisfies Prisma.WebhookDeliveryInclude;
type DeliveryRow = Prisma.WebhookDeliveryGetPayload<{ include: typeof deliveryInclude }>;

export type WebhookIds = { agentId: string; webhookId: string };
export type DeliveryIds = WebhookIds & { deliveryId: string };

/**
 * The delivery a write answers, read inside its own transaction: it answers the state it left
 * (PENDING) even when a worker takes the job the moment it commits.
 */
async function readDelivery(
  db: Tx,
  where: Prisma.WebhookDeliveryWhereUniqueInput,
): Promise<DeliveryRow | null> {
  return await db.webhookDelivery.findUnique({ where, include: deliveryInclude });
}

/**
 * Publishes a `webhook.test` event for this webhook alone, delivered like any other event (signed,
 * retried, logged). Returns the new delivery, PENDING.
 */
export async function sendTestEvent(ctx: ActorContext, ids: WebhookIds): Promise<DeliveryRow> {
  const webhook = await findWebhookOr404(ctx, ids.agentId, ids.webhookId);
  return await ctx.db.$transaction(async (tx) => {
    const eventId = await ctx.events.publish(tx, {
      type: "webhook.test",
      workspaceId: ctx.actor.workspaceId,
      agentId: webhook.agentId,
      conversationId: null,
      webhookId: webhook.id,
      data: {
        message: "Test event sent from Switchboard.",
        webhook: { id: webhook.id, event: webhook.event },
      },
    });
    // No delivery: the webhook (or its agent) was deleted since it was read, so no row was inserted.
    const delivery = await readDelivery(tx, { webhookId_eventId: { webhookId: webhook.id, eventId } });
    if (delivery === null) throw notFound("Webhook");
    return delivery;
  });
}

/**
 * A FAILED delivery
 * gets a new cycle of 3 attempts, numbered after the earlier ones, which stay in its log. 409
 * DELIVERY_NOT_FAILED otherwise. `lastError` of the webhook is left as it is.
 */
export async function redeliverWebhookDelivery(ctx: ActorContext, ids: DeliveryIds): Promise<DeliveryRow> {
  const webhook = await findWebhookOr404(ctx, ids.agentId, ids.webhookId);
  const deliveryId = assertId(ids.deliveryId, "Delivery");
  return await ctx.db.$transaction(async (tx) => {
    // Conditional on FAILED, so two simultaneous redeliveries start one cycle.
    const [reopened] = await tx.webhookDelivery.updateManyAndReturn({
      where: { id: deliveryId, webhookId: webhook.id, status: "FAILED" },
      data: { status: "PENDING" },
      select: { id: true, attemptCount: true },
    });
    if (!reopened) {
      const existing = await tx.webhookDelivery.findFirst({
        where: { id: deliveryId, webhookId: webhook.id },
        select: { status: true },
      });
      if (!existing) throw notFound("Delivery");
      throw conflict(
        "DELIVERY_NOT_FAILED",
        `Only a FAILED delivery can be redelivered; this one is ${existing.status}.`,
      );
    }
    const job: DeliveryJob = { deliveryId, attempt: reopened.attemptCount + 1 };
    await ctx.jobs.send(tx, WEBHOOK_DELIVERY_QUEUE, [{ data: job }]);
    return (await readDelivery(tx, { id: deliveryId }))!;
  });
}
