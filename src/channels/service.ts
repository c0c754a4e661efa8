/**
 * An agent's channels: WHATSAPP numbers and API channels.
 * Secrets (access token, app secret, verify token) are write-only: sealed together as one JSON in
 * Channel.credentials (shared/secret_box.ts) and never part of an answer or a log line.
 */
import type { z } from "zod";
import type { ActorContext } from "../context.ts";
import type { Prisma } from "../generated/prisma/client.ts";
import { badRequest, conflict, notFound } from "../shared/errors.ts";
import { QUEUED_TRANSACTION } from "../db/transaction.ts";
import { assertId } from "../shared/validation.ts";
import { dbAppError } from "../shared/db_errors.ts";
import { findAgentOr404 } from "../agents/service.ts";
import type { createChannelSchema, updateChannelSchema } from "./schemas.ts";
import { type ChannelSecrets, openSecrets } from "./whatsapp_config.ts";
import { announceChannelChange } from "./cache.ts";
import { channelPrivate } from "./views.ts";
import { queueTemplateSync } from "../templates/sync.ts";

/** A channel's stored row, less its credentials (its type's `inboundUrl` is computed from it). */
type ChannelRow = Prisma.ChannelGetPayload<{ omit: typeof channelPrivate }>;

const phoneTaken = () =>
  conflict(
    "DUPLICATE",
    "A channel with this phoneNumberId already exists (one channel per WhatsApp number).",
  );

/** Runs a write that may hit the phoneNumberId unique index: 409 DUPLICATE naming it. */
async function uniquePhone<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (e) {
    if (dbAppError(e)?.code === "DUPLICATE") throw phoneTaken();
    throw e;
  }
}

export async function createChannel(
  ctx: ActorContext,
  agentId: string,
  data: z.output<typeof createChannelSchema>,
): Promise<ChannelRow> {
  const agent = await findAgentOr404(ctx, agentId, { id: true, workspaceId: true });
  const secrets: ChannelSecrets | null = data.config
    ? {
      accessToken: data.config.accessToken,
      appSecret: data.config.appSecret,
      verifyToken: data.config.verifyToken,
    }
    : null;
  return await uniquePhone(() =>
    ctx.db.$transaction(async (tx) => {
      const row = await tx.channel.create({
        data: {
          workspaceId: agent.workspaceId,
          agentId: agent.id,
          type: data.type,
          label: data.label,
          phoneNumberId: data.config?.phoneNumberId ?? null,
          businessAccountId: data.config?.businessAccountId ?? null,
          credentials: secrets && ctx.secrets.seal(JSON.stringify(secrets)),
        },
        omit: channelPrivate,
      });
      // Its templates, once it commits (src/templates/sync.ts).
      if (row.businessAccountId) await queueTemplateSync(ctx, tx, [row.id]);
      return row;
    })
  );
}

/** A channel of an agent of the actor's workspace, or 404 (also for other workspaces' ids). */
async function findChannelOr404(ctx: ActorContext, agentId: string, channelId: string) {
  const row = await ctx.db.channel.findFirst({
    where: {
      id: assertId(channelId, "Channel"),
      agentId: assertId(agentId, "Agent"),
      workspaceId: ctx.actor.workspaceId,
    },
    omit: channelPrivate,
  });
  if (!row) throw notFound("Channel");
  return row;
}

export async function updateChannel(
  ctx: ActorContext,
  ids: { agentId: string; channelId: string },
  data: z.output<typeof updateChannelSchema>,
): Promise<ChannelRow> {
  const current = await findChannelOr404(ctx, ids.agentId, ids.channelId);
  const { phoneNumberId, businessAccountId, ...changed } = data.config ?? {};
  if (current.type === "API" && data.config && Object.keys(data.config).length) {
    throw badRequest("Invalid input: config: an API channel has no config", [
      { path: "config", message: "an API channel has no config" },
    ]);
  }
  const row = await uniquePhone(() =>
    ctx.db.$transaction(async (tx) => {
      // The row is locked before its secrets are read: concurrent PATCHes of one channel take
      // turns, each merging its keys into what the one before it wrote, so none is lost or refused.
      const [locked] = await tx.$queryRaw<Array<{ credentials: string | null }>>`
        SELECT credentials FROM "Channel" WHERE id = ${current.id} FOR UPDATE`;
      if (!locked) throw notFound("Channel");
      let credentials: string | undefined;
      if (Object.keys(changed).length) {
        const stored = locked.credentials ? openSecrets(ctx, locked.credentials) : {};
        credentials = ctx.secrets.seal(JSON.stringify({ ...stored, ...changed }));
      }
      await tx.channel.update({
        where: { id: current.id },
        data: { label: data.label, phoneNumberId, businessAccountId, credentials },
      });
      // Another business account: its templates replace the old one's.
      if (businessAccountId && businessAccountId !== current.businessAccountId) {
        await queueTemplateSync(ctx, tx, [current.id]);
      }
      // No business account any more: no templates to send from.
      if (businessAccountId === null) {
        await tx.whatsAppTemplate.deleteMany({ where: { channelId: current.id } });
      }
      // Every process' channel cache forgets it when this commits.
      await announceChannelChange(tx, current.id);
      return await tx.channel.findUniqueOrThrow({ where: { id: current.id }, omit: channelPrivate });
    }, QUEUED_TRANSACTION)
  );
  ctx.channels.forget(current.id);
  return row;
}

export async function deleteChannel(
  ctx: ActorContext,
  ids: { agentId: string; channelId: string },
): Promise<void> {
  const current = await findChannelOr404(ctx, ids.agentId, ids.channelId);
  await ctx.db.$transaction(async (tx) => {
    await tx.channel.deleteMany({ where: { id: current.id } });
    await announceChannelChange(tx, current.id);
  });
  ctx.channels.forget(current.id);
}
