/**
 * The delivery log of a webhook, its test event and manual redelivery (decisions.md "Agents" and
 * "Event delivery"). Sending itself is src/webhooks/delivery.ts, run by the delivery jobs.
 */
import type { ActorContext } from "../context.ts";
import type { Tx } from "../db/client.ts";
import type { Prisma } from "../generated/prisma/client.ts";
import { authorize } from "../auth/permissions.ts";
import { conflict, notFound } from "../shared/errors.ts";
import { assertId } from "../shared/validation.ts";
import { type Page, pageArgs, parsePage, toPage } from "../shared/pagination.ts";
import type { GraphQuery } from "../shared/graph_query.ts";
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

/** The log's order, over REST and GraphQL alike. */
const newestFirst: Prisma.WebhookDeliveryOrderByWithRelationInput[] = [{ createdAt: "desc" }, { id: "desc" }];

type WebhookIds = { agentId: string; webhookId: string };
type DeliveryIds = WebhookIds & { deliveryId: string };

/**
 * How a caller reads a delivery: REST as a DeliveryView, GraphQL with the selection of its query
 * (graphReader). The writes read inside their own transaction, so they answer the state they left
 * (PENDING) even when a worker takes the job the moment it commits; null is only for a get.
 */
type ReadDelivery<T> = (db: Tx, where: Prisma.WebhookDeliveryWhereUniqueInput) => Promise<T | null>;

const asView: ReadDelivery<DeliveryView> = async (db, where) => {
  const row = await db.webhookDelivery.findUnique({ where, select: deliverySelect });
  return row && deliveryView(row);
};

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
    ...pageArgs(page, "desc", { webhookId: webhook.id }),
    select: deliverySelect,
  });
  return toPage(rows, page, deliveryView);
}

/** GET .../webhooks/{webhookId}/deliveries/{deliveryId} (workspace:read). */
export function getWebhookDelivery(ctx: ActorContext, ids: DeliveryIds): Promise<DeliveryView> {
  return readWebhookDelivery(ctx, ids, asView);
}

async function readWebhookDelivery<T>(
  ctx: ActorContext,
  ids: DeliveryIds,
  read: ReadDelivery<T>,
): Promise<T> {
  authorize(ctx.actor, "workspace:read");
  const webhook = await findWebhookOr404(ctx, ids.agentId, ids.webhookId);
  const row = await read(ctx.db, { id: assertId(ids.deliveryId, "Delivery"), webhookId: webhook.id });
  if (!row) throw notFound("Delivery");
  return row;
}

/**
 * POST .../webhooks/{webhookId}/test (agent:write): publishes a `webhook.test` event for this webhook
 * alone, delivered like any other event (signed, retried, logged). Returns the new delivery, PENDING.
 * Emits `webhook.test`.
 */
export function sendTestEvent(ctx: ActorContext, ids: WebhookIds): Promise<DeliveryView> {
  return publishTestEvent(ctx, ids, asView);
}

async function publishTestEvent<T>(ctx: ActorContext, ids: WebhookIds, read: ReadDelivery<T>): Promise<T> {
  authorize(ctx.actor, "agent:write");
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
    const delivery = await read(tx, { webhookId_eventId: { webhookId: webhook.id, eventId } });
    if (delivery === null) throw notFound("Webhook");
    return delivery;
  });
}

/**
 * POST .../webhooks/{webhookId}/deliveries/{deliveryId}/redeliver (agent:write): a FAILED delivery
 * gets a new cycle of 3 attempts, numbered after the earlier ones, which stay in its log. 409
 * DELIVERY_NOT_FAILED otherwise. `lastError` of the webhook is left as it is.
 */
export function redeliverWebhookDelivery(ctx: ActorContext, ids: DeliveryIds): Promise<DeliveryView> {
  return reopenDelivery(ctx, ids, asView);
}

async function reopenDelivery<T>(ctx: ActorContext, ids: DeliveryIds, read: ReadDelivery<T>): Promise<T> {
  authorize(ctx.actor, "agent:write");
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
    await ctx.jobs.enqueue(tx, WEBHOOK_DELIVERY_QUEUE, [job]);
    return (await read(tx, { id: deliveryId }))!;
  });
}

// ---- GraphQL ----

type DeliveriesGraphQuery = GraphQuery<
  Prisma.WebhookDeliverySelect,
  Prisma.WebhookDeliveryInclude,
  Prisma.WebhookDeliveryWhereUniqueInput
>;
type DeliveryGraphQuery = Pick<DeliveriesGraphQuery, "select" | "include">;

/**
 * GraphQL `Webhook.deliveries` (workspace:read): one page of the log with the selection of `query`,
 * in the REST order. A statement per webhook, so that `take` bounds it: a relation connection would
 * load the whole log of every webhook and page it in memory. The webhook came from a scoped read;
 * the workspace is checked again in the same statement.
 */
export async function findWebhookDeliveriesForGraph(
  ctx: ActorContext,
  webhookId: string,
  query: DeliveriesGraphQuery,
) {
  authorize(ctx.actor, "workspace:read");
  return await ctx.db.webhookDelivery.findMany({
    ...query,
    where: { webhookId, webhook: { agent: { workspaceId: ctx.actor.workspaceId } } },
    orderBy: newestFirst,
  });
}

/** Reads with the nested selection of a GraphQL field (event type, attempts) in one batched call. */
function graphReader(query: DeliveryGraphQuery) {
  return (db: Tx, where: Prisma.WebhookDeliveryWhereUniqueInput) =>
    db.webhookDelivery.findUnique({ ...query, where });
}

/** GraphQL `webhookDelivery(agentId, webhookId, id)`: getWebhookDelivery with the selection of `query`. */
export function findWebhookDeliveryForGraph(ctx: ActorContext, ids: DeliveryIds, query: DeliveryGraphQuery) {
  return readWebhookDelivery(ctx, ids, graphReader(query));
}

/** GraphQL `sendWebhookTest`: sendTestEvent answering with the selection of `query`. */
export function sendTestEventForGraph(ctx: ActorContext, ids: WebhookIds, query: DeliveryGraphQuery) {
  return publishTestEvent(ctx, ids, graphReader(query));
}

/** GraphQL `redeliverWebhookDelivery`: redeliverWebhookDelivery answering with the selection of `query`. */
export function redeliverWebhookDeliveryForGraph(
  ctx: ActorContext,
  ids: DeliveryIds,
  query: DeliveryGraphQuery,
) {
  return reopenDelivery(ctx, ids, graphReader(query));
}
