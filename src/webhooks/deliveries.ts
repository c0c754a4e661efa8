/**
 * The delivery log of a webhook, its test event and manual redelivery (decisions.md "Agents" and
 * "Event delivery"). Sending itself is src/webhooks/delivery.ts, run by the delivery jobs.
 */
import type { ActorContext } from "../context.ts";
import type { Prisma } from "../generated/prisma/client.ts";
import { authorize } from "../auth/permissions.ts";
import { conflict, notFound } from "../shared/errors.ts";
import { assertId } from "../shared/validation.ts";
import { type Page, pageArgs, parsePage, toPage } from "../shared/pagination.ts";
import { findWebhookOr404 } from "./service.ts";
import { type DeliveryJob, WEBHOOK_DELIVERY_QUEUE } from "./delivery.ts";

const deliverySelect = {
  id: true,
  eventId: true,
  status: true,
  attemptCount: true,
  idempotencyKey: true,
  createdAt: true,
  updatedAt: true,
  event: { select: { type: true } },
  attempts: {
    orderBy: { number: "asc" },
    select: { number: true, startedAt: true, durationMs: true, httpStatus: true, error: true },
  },
} as const satisfies Prisma.WebhookDeliverySelect;
type DeliveryRow = Prisma.WebhookDeliveryGetPayload<{ select: typeof deliverySelect }>;

/** A delivery as the log shows it: the event's type in `event`, every attempt oldest first. */
export type DeliveryView = Omit<DeliveryRow, "event"> & { event: string };

function deliveryView({ event, ...row }: DeliveryRow): DeliveryView {
  return { ...row, event: event.type };
}

type WebhookIds = { agentId: string; webhookId: string };

/** GET /api/agents/{id}/webhooks/{webhookId}/deliveries (workspace:read): newest first, paginated. */
export async function listWebhookDeliveries(
  ctx: ActorContext,
  ids: WebhookIds,
  query: unknown,
): Promise<Page<DeliveryView>> {
  authorize(ctx.actor, "workspace:read");
  const page = parsePage(query);
  const webhook = await findWebhookOr404(ctx, ids.agentId, ids.webhookId);
  const rows = await ctx.db.webhookDelivery.findMany({
    where: { webhookId: webhook.id },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    select: deliverySelect,
    ...pageArgs(page),
  });
  return toPage(rows.map(deliveryView), page);
}

/** GET .../webhooks/{webhookId}/deliveries/{deliveryId} (workspace:read). */
export async function getWebhookDelivery(
  ctx: ActorContext,
  ids: WebhookIds & { deliveryId: string },
): Promise<DeliveryView> {
  authorize(ctx.actor, "workspace:read");
  const webhook = await findWebhookOr404(ctx, ids.agentId, ids.webhookId);
  const row = await ctx.db.webhookDelivery.findFirst({
    where: { id: assertId(ids.deliveryId, "Delivery"), webhookId: webhook.id },
    select: deliverySelect,
  });
  if (!row) throw notFound("Delivery");
  return deliveryView(row);
}

/**
 * POST .../webhooks/{webhookId}/test (agent:write): publishes a `webhook.test` event for this webhook
 * alone, delivered like any other event (signed, retried, logged). Returns the new delivery, PENDING.
 * Emits `webhook.test`.
 */
export async function sendTestEvent(ctx: ActorContext, ids: WebhookIds): Promise<DeliveryView> {
  authorize(ctx.actor, "agent:write");
  const webhook = await findWebhookOr404(ctx, ids.agentId, ids.webhookId);
  const row = await ctx.db.$transaction(async (tx) => {
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
    return await tx.webhookDelivery.findUniqueOrThrow({
      where: { webhookId_eventId: { webhookId: webhook.id, eventId } },
      select: deliverySelect,
    });
  });
  return deliveryView(row);
}

/**
 * POST .../webhooks/{webhookId}/deliveries/{deliveryId}/redeliver (agent:write): a FAILED delivery
 * gets a new cycle of 3 attempts, numbered after the earlier ones, which stay in its log. 409
 * DELIVERY_NOT_FAILED otherwise. `lastError` of the webhook is left as it is.
 */
export async function redeliverWebhookDelivery(
  ctx: ActorContext,
  ids: WebhookIds & { deliveryId: string },
): Promise<DeliveryView> {
  authorize(ctx.actor, "agent:write");
  const webhook = await findWebhookOr404(ctx, ids.agentId, ids.webhookId);
  const deliveryId = assertId(ids.deliveryId, "Delivery");
  const row = await ctx.db.$transaction(async (tx) => {
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
    await ctx.jobs.enqueue(tx, WEBHOOK_DELIVERY_QUEUE, [job]);
    return await tx.webhookDelivery.findUniqueOrThrow({ where: { id: deliveryId }, select: deliverySelect });
  });
  return deliveryView(row);
}
