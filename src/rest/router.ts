/** The REST layer: the paths of docs/api.md, derived from the capability declarations (./derive.ts). */
import { Hono } from "hono";
import type { Deps } from "../context.ts";
import { CAPABILITIES } from "../capabilities.ts";
import { errorResponse } from "./errors.ts";
import { capabilityRoutes } from "./derive.ts";
import { openApiRoutes } from "./openapi_routes.ts";
import { whatsappRoutes } from "../channels/whatsapp/routes.ts";
import { mediaRoutes } from "./media_routes.ts";

export function restRoutes(deps: Deps): Hono {
  const app = new Hono();
  app.route("/", capabilityRoutes(deps, CAPABILITIES));
  app.route("/", openApiRoutes(CAPABILITIES));
  app.route("/", whatsappRoutes(deps));
  app.route("/", mediaRoutes(deps));
  app.onError((err, c) => errorResponse(err, c, deps.logger));
  return app;
}
