/** Intents of an agent (spec section 4 "Intents", decisions.md). */
import type { ActorContext } from "../context.ts";
import type { Prisma } from "../generated/prisma/client.ts";
import { authorize } from "../auth/permissions.ts";
import { badRequest, conflict, notFound } from "../shared/errors.ts";
import { assertId, parseInput } from "../shared/validation.ts";
import { type Page, pageArgs, parsePage, toPage } from "../shared/pagination.ts";
import { findAgentOr404 } from "../agents/service.ts";
import type { GraphQuery } from "../shared/graph_query.ts";
import { createIntentSchema, type RequiredField, updateIntentSchema } from "./schemas.ts";
import { intentTag, tagProblem } from "./tag.ts";
import { visibleUrl } from "../webhooks/service.ts";

export const intentSelect = {
  id: true,
  agentId: true,
  name: true,
  tag: true,
  description: true,
  triggerOnTypes: true,
  requiredFields: true,
  webhookUrl: true,
  webhookMethod: true,
  createdAt: true,
  updatedAt: true,
} as const satisfies Prisma.IntentSelect;
export type IntentView = Omit<Prisma.IntentGetPayload<{ select: typeof intentSelect }>, "requiredFields"> & {
  requiredFields: RequiredField[];
};

/** Credential-like query values of webhookUrl are masked for roles without webhook:secrets. */
function intentView(ctx: ActorContext, row: IntentView): IntentView {
  return { ...row, webhookUrl: visibleUrl(ctx, row.webhookUrl) };
}

function checkedTag(name: string): string {
  const tag = intentTag(name);
  const problem = tagProblem(tag);
  if (problem) throw badRequest(`Invalid input: name: ${problem}`, [{ path: "name", message: problem }]);
  return tag;
}

async function checkedWebhookUrl(ctx: ActorContext, url: string): Promise<string> {
  const refusal = await ctx.outbound.refusal(url);
  if (refusal) {
    throw badRequest(`Invalid input: webhookUrl: ${refusal}`, [{ path: "webhookUrl", message: refusal }]);
  }
  return url;
}

function isUniqueViolation(e: unknown): boolean {
  return (e as { code?: string })?.code === "P2002";
}

const duplicateTag = (tag: string) =>
  conflict("DUPLICATE_INTENT", `The agent already has an intent with the tag <${tag}>.`);

/** POST /api/agents/{id}/intents (agent:write). 409 DUPLICATE_INTENT when the tag is taken. */
export async function createIntent(ctx: ActorContext, agentId: string, input: unknown): Promise<IntentView> {
  authorize(ctx.actor, "agent:write");
  const data = parseInput(createIntentSchema, input);
  const tag = checkedTag(data.name);
  await checkedWebhookUrl(ctx, data.webhookUrl);
  await findAgentOr404(ctx, agentId, { id: true });
  try {
    return intentView(
      ctx,
      await ctx.db.intent.create({ data: { ...data, tag, agentId }, select: intentSelect }) as IntentView,
    );
  } catch (e) {
    if (isUniqueViolation(e)) throw duplicateTag(tag);
    throw e;
  }
}

/** GET /api/agents/{id}/intents (workspace:read). */
export async function listIntents(
  ctx: ActorContext,
  agentId: string,
  query: unknown,
): Promise<Page<IntentView>> {
  authorize(ctx.actor, "workspace:read");
  const page = parsePage(query);
  await findAgentOr404(ctx, agentId, { id: true });
  const rows = await ctx.db.intent.findMany({
    ...pageArgs(page, "asc", { agentId }),
    select: intentSelect,
  });
  return toPage(rows as IntentView[], page, (r) => intentView(ctx, r));
}

async function findIntentOr404(ctx: ActorContext, agentId: string, intentId: string): Promise<IntentView> {
  const intent = await ctx.db.intent.findFirst({
    where: {
      id: assertId(intentId, "Intent"),
      agentId: assertId(agentId, "Agent"),
      agent: { workspaceId: ctx.actor.workspaceId },
    },
    select: intentSelect,
  });
  if (!intent) throw notFound("Intent");
  return intent as IntentView;
}

/** GET /api/agents/{id}/intents/{intentId} (workspace:read). */
export async function getIntent(ctx: ActorContext, agentId: string, intentId: string): Promise<IntentView> {
  authorize(ctx.actor, "workspace:read");
  return intentView(ctx, await findIntentOr404(ctx, agentId, intentId));
}

/** PATCH /api/agents/{id}/intents/{intentId} (agent:write): changes the fields given. */
export async function updateIntent(
  ctx: ActorContext,
  ids: { agentId: string; intentId: string },
  input: unknown,
): Promise<IntentView> {
  authorize(ctx.actor, "agent:write");
  const data = parseInput(updateIntentSchema, input);
  const tag = data.name !== undefined ? checkedTag(data.name) : undefined;
  if (data.webhookUrl !== undefined) await checkedWebhookUrl(ctx, data.webhookUrl);
  const current = await findIntentOr404(ctx, ids.agentId, ids.intentId);
  try {
    return intentView(
      ctx,
      await ctx.db.intent.update({
        where: { id: current.id },
        data: { ...data, ...(tag ? { tag } : {}) },
        select: intentSelect,
      }) as IntentView,
    );
  } catch (e) {
    if (isUniqueViolation(e)) throw duplicateTag(tag!);
    throw e;
  }
}

/** DELETE /api/agents/{id}/intents/{intentId} (agent:write). */
export async function deleteIntent(
  ctx: ActorContext,
  ids: { agentId: string; intentId: string },
): Promise<void> {
  authorize(ctx.actor, "agent:write");
  const current = await findIntentOr404(ctx, ids.agentId, ids.intentId);
  await ctx.db.intent.delete({ where: { id: current.id } });
}

// ---- GraphQL reads ----

type IntentGraphQuery = GraphQuery<Prisma.IntentSelect, Prisma.IntentInclude, Prisma.IntentWhereUniqueInput>;

/** GraphQL `intents(agentId)` (workspace:read): an agent's intents with the selection of `query`. */
export async function findIntentsForGraph(ctx: ActorContext, agentId: string, query: IntentGraphQuery) {
  authorize(ctx.actor, "workspace:read");
  await findAgentOr404(ctx, agentId, { id: true });
  return await ctx.db.intent.findMany({
    ...query,
    where: { agentId },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
}

/** GraphQL `intent(agentId, id)` (workspace:read): one intent with the selection of `query`, or 404. */
export async function findIntentForGraph(
  ctx: ActorContext,
  ids: { agentId: string; intentId: string },
  query: IntentGraphQuery,
) {
  authorize(ctx.actor, "workspace:read");
  const intent = await ctx.db.intent.findFirst({
    ...query,
    where: {
      id: assertId(ids.intentId, "Intent"),
      agentId: assertId(ids.agentId, "Agent"),
      agent: { workspaceId: ctx.actor.workspaceId },
    },
  });
  if (!intent) throw notFound("Intent");
  return intent;
}
