/**
 * What an actor sees of a webhook's stored URL and headers, and the views of the webhook types
 * declared with Pothos (src/graphql/types/webhooks.ts).
 */
import type { Prisma } from "../generated/prisma/client.ts";
import { declaredType, type Presenter } from "../shared/view.ts";
import { MASK, maskUrlSecrets, openUrlSecrets } from "../shared/url_secrets.ts";
import { can } from "../auth/permissions.ts";
import { SEALED_PREFIX } from "../shared/secret_box.ts";
import { sql } from "../shared/sql_fragment.ts";

// presentUrl's SQL names the sealed values' prefix as written text.
if (SEALED_PREFIX !== "sb1:") throw new Error("presentUrl.mayChange names another sealed prefix");

/**
 * URLs (webhook and intent) are stored with credential-like query values sealed: opened for roles
 * with webhook:secrets, masked for the others.
 */
export const presentUrl: Presenter = {
  apply: (ctx, url) =>
    can(ctx.actor, "webhook:secrets")
      ? openUrlSecrets(ctx.secrets, String(url))
      : maskUrlSecrets(String(url)),
  // Opening changes only a URL with a sealed value; masking only one with a query or a user name.
  mayChange: (ctx, url) =>
    can(ctx.actor, "webhook:secrets")
      ? sql`strpos(${url}, 'sb1:') > 0`
      : sql`(strpos(${url}, '?') > 0 OR strpos(${url}, '@') > 0)`,
};

/** Stored header values are sealed: opened for roles with webhook:secrets, masked for the others. */
export const presentHeaders: Presenter = {
  apply: (ctx, stored) => {
    const headers = (stored ?? {}) as Record<string, string>;
    if (can(ctx.actor, "webhook:secrets")) return ctx.secrets.openValues(headers);
    return Object.fromEntries(Object.keys(headers).map((k) => [k, MASK]));
  },
};

/** A delivery's attempt: declared with Pothos (src/graphql/types/webhooks.ts). */
export const deliveryAttemptView = declaredType("WebhookDeliveryAttempt");

/** A delivery of the log: declared with Pothos (src/graphql/types/webhooks.ts). */
export const deliveryView = declaredType("WebhookDelivery");

/** An event webhook registration: declared with Pothos (src/graphql/types/webhooks.ts). */
export const webhookView = declaredType("Webhook");

/** What a webhook's row keeps private: its signing secrets, shown once by the writes that make them. */
export const webhookPrivate = {
  signingSecret: true,
  previousSigningSecret: true,
  previousSecretExpiresAt: true,
} as const satisfies Prisma.EventWebhookOmit;
