/**
 * A WhatsApp channel's templates, kept as its business account lists them: synced in full from the
 * Graph API (every page) when the channel is created or its businessAccountId changes, every hour,
 * on demand, and when Meta's status webhook names a template this channel does not know; a status
 * webhook on a known template updates it in place, on every channel of that account signed by the
 * same app.
 */
import type { ActorContext, Deps } from "../context.ts";
import type { SqlTx } from "../db/client.ts";
import { AppError, conflict, notFound } from "../shared/errors.ts";
import { assertId } from "../shared/validation.ts";
import { newId } from "../shared/ids.ts";
import type { InboundChannel } from "../channels/cache.ts";
import { openSecrets } from "../channels/whatsapp_config.ts";
import type { TemplateStatusUpdate } from "../channels/whatsapp/inbound.ts";
import { fetchTemplates, type TemplateFetchFailure } from "./graph_templates.ts";
import { replaceTemplates, setTemplateStatus } from "./sql.ts";

export const TEMPLATE_SYNC_QUEUE = "template-sync";

export interface TemplateSyncJob {
  channelId: string;
}

export type SyncOutcome =
  | { ok: true; stored: number; removed: number; pages: number }
  | { ok: false; reason: "gone" }
  | { ok: false; reason: "no-account" }
  | { ok: false; reason: "failed"; error: TemplateFetchFailure };

/** Inside `tx`: a sync of each channel, one waiting job per channel however often it is asked. */
export async function queueTemplateSync(deps: Pick<Deps, "jobs">, tx: SqlTx, channelIds: readonly string[]) {
  if (!channelIds.length) return;
  await deps.jobs.send(
    tx,
    TEMPLATE_SYNC_QUEUE,
    channelIds.map((channelId) => ({ data: { channelId } satisfies TemplateSyncJob, key: channelId })),
  );
}

/** Every template of the channel's business account, fetched and stored (the list replaced). */
export async function syncTemplates(deps: Deps, channelId: string): Promise<SyncOutcome> {
  const channel = await deps.db.channel.findUnique({
    where: { id: channelId },
    select: { id: true, workspaceId: true, type: true, businessAccountId: true, credentials: true },
  });
  if (!channel) return { ok: false, reason: "gone" };
  if (channel.type !== "WHATSAPP" || !channel.businessAccountId) return { ok: false, reason: "no-account" };
  const accessToken = channel.credentials ? openSecrets(deps, channel.credentials).accessToken : undefined;
  if (!accessToken) {
    return {
      ok: false,
      reason: "failed",
      error: { status: 0, message: "the channel has no access token", retryable: false },
    };
  }
  const fetched = await fetchTemplates(
    (url, init) => deps.outbound.request(url, init),
    { graphUrl: deps.config.whatsappGraphUrl, businessAccountId: channel.businessAccountId, accessToken },
  );
  if (!fetched.ok) return { ok: false, reason: "failed", error: fetched.error };
  // Meta lists a (name, language) once; a repeat would be one row updated twice by one statement.
  const unique = new Map(fetched.templates.map((t) => [`${t.name}\u0000${t.language}`, t]));
  const [counts] = await replaceTemplates.rows(deps.db, {
    workspaceId: channel.workspaceId,
    channelId: channel.id,
    templates: [...unique.values()].map((t) => ({ ...t, id: newId() })),
    now: deps.clock.now(),
  });
  return { ok: true, stored: counts.stored, removed: counts.removed, pages: fetched.pages };
}

/** The sync a member asks for: 409 without a business account, 502 when Meta's answer fails it. */
export async function syncTemplatesNow(ctx: ActorContext, channelId: string) {
  const channel = await ctx.db.channel.findFirst({
    where: { id: assertId(channelId, "Channel"), workspaceId: ctx.actor.workspaceId },
    select: { id: true },
  });
  if (!channel) throw notFound("Channel");
  const outcome = await syncTemplates(ctx, channel.id);
  if (!outcome.ok) {
    if (outcome.reason === "gone") throw notFound("Channel");
    if (outcome.reason === "no-account") {
      throw conflict(
        "NO_BUSINESS_ACCOUNT",
        "The channel has no config.businessAccountId (a WhatsApp channel's WABA id) to sync templates from.",
      );
    }
    throw new AppError(
      "TEMPLATE_SYNC_FAILED",
      502,
      `WhatsApp did not list the templates: ${outcome.error.message}`,
    );
  }
  const data = await ctx.db.whatsAppTemplate.findMany({
    where: { channelId: channel.id },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
  return { data };
}

/** Meta's events that name a template's new status as its template list would show it. */
const STATUS_OF_EVENT: Readonly<Record<string, string>> = {
  APPROVED: "APPROVED",
  REJECTED: "REJECTED",
  PENDING: "PENDING",
  PAUSED: "PAUSED",
  DISABLED: "DISABLED",
  IN_APPEAL: "IN_APPEAL",
  PENDING_DELETION: "PENDING_DELETION",
  DELETED: "DELETED",
  LIMIT_EXCEEDED: "LIMIT_EXCEEDED",
  REINSTATED: "APPROVED",
};

/**
 * Meta's template status webhooks, received on `channel` (whose app secret signed them): each
 * updates the template on every WhatsApp channel of its business account signed by the same app.
 * An event without a plain status (FLAGGED...) or a template a channel does not know yet gets that
 * channel a full sync instead.
 */
export async function applyTemplateUpdates(
  deps: Deps,
  channel: InboundChannel,
  updates: readonly TemplateStatusUpdate[],
): Promise<void> {
  for (const update of updates) {
    const candidates = await deps.db.channel.findMany({
      where: { businessAccountId: update.businessAccountId, type: "WHATSAPP" },
      select: { id: true },
    });
    const channelIds: string[] = [];
    for (const { id } of candidates) {
      const other = id === channel.id ? channel : await deps.channels.whatsapp(id);
      if (other?.secrets.appSecret && other.secrets.appSecret === channel.secrets.appSecret) {
        channelIds.push(id);
      }
    }
    if (!channelIds.length) {
      deps.logger.debug("template status of an account without a channel of this app", {
        channelId: channel.id,
        template: update.name,
      });
      continue;
    }
    const status = STATUS_OF_EVENT[update.event];
    const updated = status
      ? new Set(
        (await setTemplateStatus.rows(deps.db, { channelIds, ...update, status })).map((r) => r.channelId),
      )
      : new Set<string>();
    await queueTemplateSync(deps, deps.db, channelIds.filter((id) => !updated.has(id)));
    deps.logger.info("template status", {
      template: update.name,
      language: update.language,
      event: update.event,
      reason: update.reason,
      channels: channelIds.length,
    });
  }
}
