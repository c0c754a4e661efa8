/**
 * What the workspace's messages cost, declared once (see shared/capability.ts): OWNER and MANAGER
 * (and API tokens, which act as MANAGER) may read it; AGENT and VIEWER get 403. REST serves it at
 * GET /api/usage, GraphQL as a field of the acting workspace, `workspace { usage(from, to) }`.
 */
import { defineOperation } from "../shared/capability.ts";
import { workspace } from "../workspaces/capabilities.ts";
import { usageOf, usageRangeSchema, usageSchema } from "./usage.ts";

export const usage = defineOperation({
  name: "usage",
  summary:
    "The workspace's delivered outbound messages (DELIVERED or READ) created in [from, to), counted per channel, UTC day, pricing category and billable.",
  access: { kind: "workspace", action: "usage:read" },
  params: {},
  input: usageRangeSchema,
  output: { schema: usageSchema, typeName: "Usage" },
  http: { method: "GET", path: "/api/usage" },
  query: true,
  fieldOf: workspace,
  run: (ctx, _params, input) => usageOf(ctx, input),
});
