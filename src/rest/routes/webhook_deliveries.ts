/** Event webhook delivery log, test event and redelivery (decisions.md "Agents", "Event delivery"). */
import { Hono } from "hono";
import type { Deps } from "../../context.ts";
import * as webhooks from "../../webhooks/mod.ts";
import { actorOf, queryOf } from "../http.ts";

export function webhookDeliveryRoutes(deps: Deps): Hono {
  const r = new Hono();
  const base = "/api/agents/:agentId/webhooks/:webhookId";

  r.get(`${base}/deliveries`, async (c) => {
    const ctx = await actorOf(deps, c);
    return c.json(await webhooks.listWebhookDeliveries(ctx, c.req.param(), queryOf(c)));
  });
  r.get(`${base}/deliveries/:deliveryId`, async (c) => {
    return c.json(await webhooks.getWebhookDelivery(await actorOf(deps, c), c.req.param()));
  });
  // 202: the delivery is accepted and sent in the background; its log shows how it went.
  r.post(`${base}/test`, async (c) => {
    return c.json(await webhooks.sendTestEvent(await actorOf(deps, c), c.req.param()), 202);
  });
  r.post(`${base}/deliveries/:deliveryId/redeliver`, async (c) => {
    return c.json(await webhooks.redeliverWebhookDelivery(await actorOf(deps, c), c.req.param()), 202);
  });

  return r;
}
