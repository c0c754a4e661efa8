/**
 * Agents and their prompt versions (docs/behaviour.md "Agents, prompts and intents"): the functions behind
 * the capabilities of ./capabilities.ts, with typed input (access is checked and input parsed by
 * the capability runner; internal callers pass typed input).
 */
import type { ActorContext } from "../context.ts";
import type { z } from "zod";
import { type Agent, Prisma } from "../generated/prisma/client.ts";
import { notFound } from "../shared/errors.ts";
import { assertId } from "../shared/validation.ts";
import { renderSystemPrompt } from "./template.ts";
import {
  type createAgentSchema,
  FLAG_DEFAULTS,
  type replaceAgentSchema,
  type revertPromptSchema,
  type setStatusSchema,
  type updatePromptSchema,
} from "./schemas.ts";

type CreateAgentInput = z.output<typeof createAgentSchema>;
type ReplaceAgentInput = z.output<typeof replaceAgentSchema>;

/**
 * Loads an agent of the actor's workspace or throws 404 (also for other workspaces' ids): its whole
 * row, or the columns `select` names.
 */
export async function findAgentOr404(ctx: ActorContext, agentId: string): Promise<Agent>;
export async function findAgentOr404<S extends Prisma.AgentSelect>(
  ctx: ActorContext,
  agentId: string,
  select: S,
): Promise<Prisma.AgentGetPayload<{ select: S }>>;
export async function findAgentOr404(
  ctx: ActorContext,
  agentId: string,
  select?: Prisma.AgentSelect,
): Promise<object> {
  const agent = await ctx.db.agent.findFirst({
    where: { id: assertId(agentId, "Agent"), workspaceId: ctx.actor.workspaceId },
    select,
  });
  if (!agent) throw notFound("Agent");
  return agent;
}

/** Creates an agent, ACTIVE, with a systemPrompt generated from the template. */
export async function createAgent(ctx: ActorContext, data: CreateAgentInput): Promise<Agent> {
  const template = data.template ?? "SUPORTE";
  return await ctx.db.agent.create({
    data: {
      ...data,
      reminderTemplate: data.reminderTemplate ?? Prisma.DbNull,
      template,
      model: data.model ?? ctx.config.openai.defaultModel,
      workspaceId: ctx.actor.workspaceId,
      systemPrompt: renderSystemPrompt(template, data),
    },
  });
}

/**
 * Replaces the whole agent. Omitted optional fields become null,
 * omitted flags return to their defaults, template and model to theirs; read-only fields are
 * ignored.
 */
export async function replaceAgent(
  ctx: ActorContext,
  agentId: string,
  data: ReplaceAgentInput,
): Promise<Agent> {
  await findAgentOr404(ctx, agentId, { id: true });
  return await ctx.db.agent.update({
    where: { id: agentId },
    data: {
      name: data.name,
      template: data.template ?? "SUPORTE",
      model: data.model ?? ctx.config.openai.defaultModel,
      jobName: data.jobName ?? null,
      jobSite: data.jobSite ?? null,
      jobDescription: data.jobDescription ?? null,
      trainingContext: data.trainingContext ?? null,
      temperature: data.temperature ?? null,
      enabledHumanTransfer: data.enabledHumanTransfer ?? FLAG_DEFAULTS.enabledHumanTransfer,
      enabledReminder: data.enabledReminder ?? FLAG_DEFAULTS.enabledReminder,
      splitMessages: data.splitMessages ?? FLAG_DEFAULTS.splitMessages,
      enabledEmoji: data.enabledEmoji ?? FLAG_DEFAULTS.enabledEmoji,
      signMessages: data.signMessages ?? FLAG_DEFAULTS.signMessages,
      enabledVision: data.enabledVision ?? FLAG_DEFAULTS.enabledVision,
      messageGroupingTime: data.messageGroupingTime ?? FLAG_DEFAULTS.messageGroupingTime,
      maxDailyMessages: data.maxDailyMessages ?? FLAG_DEFAULTS.maxDailyMessages,
      autoCloseMinutes: data.autoCloseMinutes ?? FLAG_DEFAULTS.autoCloseMinutes,
      reminderTemplate: data.reminderTemplate ?? Prisma.DbNull,
    },
  });
}

/** Sets ACTIVE or PAUSED. */
export async function setAgentStatus(
  ctx: ActorContext,
  agentId: string,
  { status }: z.output<typeof setStatusSchema>,
): Promise<Agent> {
  await findAgentOr404(ctx, agentId, { id: true });
  return await ctx.db.agent.update({ where: { id: agentId }, data: { status } });
}

async function writePrompt(
  ctx: ActorContext,
  agentId: string,
  change: { systemPrompt: string; rationale: string; revertedFrom?: string },
): Promise<Agent> {
  return await ctx.db.$transaction(async (tx) => {
    // The agent row first: inserting the version (its foreign key) and then updating the agent
    // would upgrade a lock a concurrent DELETE may be waiting on, a deadlock. Gone: 404 (P2025).
    const agent = await tx.agent.update({
      where: { id: agentId },
      data: { systemPrompt: change.systemPrompt },
    });
    await tx.promptVersion.create({
      data: {
        agentId,
        systemPrompt: change.systemPrompt,
        rationale: change.rationale,
        revertedFrom: change.revertedFrom,
        authorUserId: ctx.actor.userId,
        authorLabel: ctx.actor.label,
      },
    });
    return agent;
  });
}

/** Sets the prompt and records a PromptVersion. */
export async function updatePrompt(
  ctx: ActorContext,
  agentId: string,
  change: z.output<typeof updatePromptSchema>,
): Promise<Agent> {
  await findAgentOr404(ctx, agentId, { id: true });
  return writePrompt(ctx, agentId, change);
}

/** Restores an earlier version's text; this itself records a new version. */
export async function revertPrompt(
  ctx: ActorContext,
  agentId: string,
  versionId: string,
  body: z.output<typeof revertPromptSchema>,
): Promise<Agent> {
  await findAgentOr404(ctx, agentId, { id: true });
  const version = await ctx.db.promptVersion.findFirst({
    where: { id: assertId(versionId, "Prompt version"), agentId },
    select: { id: true, systemPrompt: true },
  });
  if (!version) throw notFound("Prompt version");
  return writePrompt(ctx, agentId, {
    systemPrompt: version.systemPrompt,
    rationale: body?.rationale || `Reverted to version ${version.id}`,
    revertedFrom: version.id,
  });
}

/** Hard delete: everything of the agent (prompt versions, intents, webhooks, channels, conversations, events) goes with it. */
export async function deleteAgent(ctx: ActorContext, agentId: string): Promise<void> {
  const { count } = await ctx.db.agent.deleteMany({
    where: { id: assertId(agentId, "Agent"), workspaceId: ctx.actor.workspaceId },
  });
  if (!count) throw notFound("Agent");
}
