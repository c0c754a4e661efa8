/**
 * Intents of an agent (docs/behaviour.md "Agents, prompts and intents"): the functions behind
 * ./capabilities.ts, with typed input.
 */
import type { z } from "zod";
import type { ActorContext } from "../context.ts";
import type { Intent } from "../generated/prisma/client.ts";
import { badRequest, conflict, notFound } from "../shared/errors.ts";
import { assertId } from "../shared/validation.ts";
import { sealUrlSecrets } from "../shared/url_secrets.ts";
import { findAgentOr404 } from "../agents/service.ts";
import type { createIntentSchema, RequiredField, updateIntentSchema } from "./schemas.ts";
import { intentTag, tagProblem } from "./tag.ts";

/**
 * An intent's stored row, its requiredFields typed. Credential-like query values of its webhookUrl
 * are stored sealed; the Intent type's field presents them per role.
 */
export type IntentRow = Omit<Intent, "requiredFields"> & {
  requiredFields: RequiredField[];
};

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

/** Creates an intent. 409 DUPLICATE_INTENT when the tag is taken. */
export async function createIntent(
  ctx: ActorContext,
  agentId: string,
  data: z.output<typeof createIntentSchema>,
): Promise<IntentRow> {
  const tag = checkedTag(data.name);
  await checkedWebhookUrl(ctx, data.webhookUrl);
  await findAgentOr404(ctx, agentId, { id: true });
  try {
    return await ctx.db.intent.create({
      data: { ...data, webhookUrl: sealUrlSecrets(ctx.secrets, data.webhookUrl), tag, agentId },
    }) as IntentRow;
  } catch (e) {
    if (isUniqueViolation(e)) throw duplicateTag(tag);
    throw e;
  }
}

async function findIntentOr404(ctx: ActorContext, agentId: string, intentId: string): Promise<IntentRow> {
  const intent = await ctx.db.intent.findFirst({
    where: {
      id: assertId(intentId, "Intent"),
      agentId: assertId(agentId, "Agent"),
      agent: { workspaceId: ctx.actor.workspaceId },
    },
  });
  if (!intent) throw notFound("Intent");
  return intent as IntentRow;
}

/** Changes the fields given. */
export async function updateIntent(
  ctx: ActorContext,
  ids: { agentId: string; intentId: string },
  data: z.output<typeof updateIntentSchema>,
): Promise<IntentRow> {
  const tag = data.name !== undefined ? checkedTag(data.name) : undefined;
  if (data.webhookUrl !== undefined) await checkedWebhookUrl(ctx, data.webhookUrl);
  const current = await findIntentOr404(ctx, ids.agentId, ids.intentId);
  try {
    return await ctx.db.intent.update({
      where: { id: current.id },
      data: {
        ...data,
        webhookUrl: data.webhookUrl && sealUrlSecrets(ctx.secrets, data.webhookUrl),
        ...(tag ? { tag } : {}),
      },
    }) as IntentRow;
  } catch (e) {
    if (isUniqueViolation(e)) throw duplicateTag(tag!);
    throw e;
  }
}

export async function deleteIntent(
  ctx: ActorContext,
  ids: { agentId: string; intentId: string },
): Promise<void> {
  const current = await findIntentOr404(ctx, ids.agentId, ids.intentId);
  await ctx.db.intent.delete({ where: { id: current.id } });
}
