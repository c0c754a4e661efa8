/** The REST layer: the spec's paths, each a line or two around a service call. */
import { Hono } from "hono";
import type { Deps } from "../context.ts";
import { errorResponse } from "./errors.ts";
import { workspaceRoutes } from "./routes/workspaces.ts";
import { agentRoutes } from "./routes/agents.ts";
import { webhookDeliveryRoutes } from "./routes/webhook_deliveries.ts";
import { openApiRoutes } from "./openapi_routes.ts";
import { CAPABILITIES } from "../capabilities.ts";

export function restRoutes(deps: Deps): Hono {
  const app = new Hono();
  app.route("/", workspaceRoutes(deps));
  app.route("/", agentRoutes(deps));
  app.route("/", webhookDeliveryRoutes(deps));
  app.route("/", openApiRoutes(CAPABILITIES));
  app.onError((err, c) => errorResponse(err, c, deps.logger));
  return app;
}
