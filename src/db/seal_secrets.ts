/**
 * Brings stored secrets under the secret box. One function for both jobs:
 * - "plaintext" (the data migration, run at every start): seals values stored before the box
 *   existed (no `sb1:` prefix). Prisma's SQL migrations cannot do it: they do not know the key.
 * - "rotate" (`deno task admin rotate-secrets`): also reseals values under an older key, so that
 *   key can then be dropped from SECRETS_KEY_PREVIOUS.
 * Idempotent, and safe with several processes at once: each batch locks its rows (FOR UPDATE in id
 * order), and a row another process has just resealed no longer matches when the lock is granted.
 */
import type { Db } from "./client.ts";
import { SEALED_PREFIX, SecretBox } from "../shared/secret_box.ts";
import { fixUrlSecrets } from "../shared/url_secrets.ts";

const BATCH = 100;

type Row = {
  id: string;
  signingSecret: string;
  previousSigningSecret: string | null;
  headers: unknown;
};

/**
 * Seals (or reseals) the webhook, intent, channel and approval secrets that need it (credentials in
 * URL queries included); returns how many rows of each changed.
 */
export async function sealStoredSecrets(
  db: Db,
  box: SecretBox,
  mode: "plaintext" | "rotate",
): Promise<{ webhooks: number; intents: number; channels: number; approvals: number }> {
  // A value needs work unless it starts with this.
  const done = mode === "plaintext" ? SEALED_PREFIX : `${SEALED_PREFIX}${box.kid}:`;
  const fix = (v: string) => v.startsWith(done) ? v : box.reseal(v);
  const channels = await sealChannels(db, done, fix);
  const approvals = await sealApprovals(db, done, fix) + await sealApprovalUrls(db, done, fix);
  const intents = await sealUrls(db, "Intent", "webhookUrl", done, fix);
  let changed = await sealUrls(db, "EventWebhook", "url", done, fix);
  for (;;) {
    const n = await db.$transaction(async (tx) => {
      const rows = await tx.$queryRaw<Row[]>`
        SELECT id, "signingSecret", "previousSigningSecret", headers
          FROM "EventWebhook"
         WHERE NOT starts_with("signingSecret", ${done})
            OR NOT starts_with(coalesce("previousSigningSecret", ${done}), ${done})
            OR (jsonb_typeof(headers) = 'object'
                AND EXISTS (SELECT 1 FROM jsonb_each_text(headers) h WHERE NOT starts_with(h.value, ${done})))
         ORDER BY id
         LIMIT ${BATCH}
           FOR UPDATE`;
      for (const row of rows) {
        const headers = (row.headers ?? {}) as Record<string, string>;
        const sealedHeaders = Object.fromEntries(
          Object.entries(headers).map(([k, v]) => [k, fix(String(v))]),
        );
        await tx.$executeRaw`
          UPDATE "EventWebhook"
             SET "signingSecret" = ${fix(row.signingSecret)},
                 "previousSigningSecret" = ${row.previousSigningSecret && fix(row.previousSigningSecret)},
                 headers = ${JSON.stringify(sealedHeaders)}::jsonb
           WHERE id = ${row.id}`;
      }
      return rows.length;
    });
    changed += n;
    // Not `n < BATCH`: rows resealed by another process while we waited drop out of a batch.
    if (n === 0) return { webhooks: changed, intents, channels, approvals };
  }
}

/** Channel.credentials: one sealed JSON per channel (channels/service.ts), same batches and locks. */
async function sealChannels(db: Db, done: string, fix: (v: string) => string): Promise<number> {
  let changed = 0;
  for (;;) {
    const n = await db.$transaction(async (tx) => {
      const rows = await tx.$queryRaw<Array<{ id: string; credentials: string }>>`
        SELECT id, credentials FROM "Channel"
         WHERE credentials IS NOT NULL AND NOT starts_with(credentials, ${done})
         ORDER BY id
         LIMIT ${BATCH}
           FOR UPDATE`;
      for (const row of rows) {
        await tx.$executeRaw`UPDATE "Channel" SET credentials = ${fix(row.credentials)} WHERE id = ${row.id}`;
      }
      return rows.length;
    });
    changed += n;
    if (n === 0) return changed;
  }
}

/**
 * PendingApproval.before/after of webhook changes: their `headers` values are sealed like the
 * webhook's own (src/approvals/changes.ts), same batches and locks.
 */
async function sealApprovals(db: Db, done: string, fix: (v: string) => string): Promise<number> {
  const unsealed = (column: string) =>
    `EXISTS (SELECT 1 FROM jsonb_each_text(CASE WHEN jsonb_typeof(${column}->'headers') = 'object'
       THEN ${column}->'headers' ELSE '{}'::jsonb END) h WHERE NOT starts_with(h.value, $1))`;
  const fixHeaders = (snapshot: unknown) => {
    if (!snapshot || typeof snapshot !== "object" || !("headers" in snapshot)) return snapshot;
    const headers = (snapshot as { headers: Record<string, string> }).headers;
    return {
      ...snapshot,
      headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, fix(String(v))])),
    };
  };
  // SQL NULL stays NULL (a create has no `before`, a delete no `after`).
  const json = (v: unknown) => v === null || v === undefined ? null : JSON.stringify(v);
  let changed = 0;
  for (;;) {
    const n = await db.$transaction(async (tx) => {
      const rows = await tx.$queryRawUnsafe<Array<{ id: string; before: unknown; after: unknown }>>(
        `SELECT id, before, after FROM "PendingApproval"
          WHERE ${unsealed("before")} OR ${unsealed("after")}
          ORDER BY id LIMIT ${BATCH} FOR UPDATE`,
        done,
      );
      for (const row of rows) {
        await tx.$executeRaw`
          UPDATE "PendingApproval"
             SET before = ${json(fixHeaders(row.before))}::jsonb, after = ${
          json(fixHeaders(row.after))
        }::jsonb
           WHERE id = ${row.id}`;
      }
      return rows.length;
    });
    changed += n;
    if (n === 0) return changed;
  }
}

/**
 * A URL whose query has a value not yet sealed as `done` asks for: the rows worth reading in JS,
 * which then seals only the credential-like values (shared/url_secrets.ts). Other parameters match
 * too, so these passes walk by id instead of until nothing matches.
 */
const UNSEALED_QUERY = (column: string) => `${column} ~ ('[?&][^=&#]+=(?!' || $1 || ')[^&#]')`;

/** EventWebhook.url and Intent.webhookUrl: credential-like query values sealed, same batches and locks. */
async function sealUrls(
  db: Db,
  table: "EventWebhook" | "Intent",
  column: "url" | "webhookUrl",
  done: string,
  fix: (v: string) => string,
): Promise<number> {
  let changed = 0;
  let after = "";
  const select = `SELECT id, "${column}" AS url FROM "${table}"
    WHERE id > $2 AND ${UNSEALED_QUERY(`"${column}"`)} ORDER BY id LIMIT ${BATCH}`;
  for (;;) {
    // Looked for outside a transaction first: most starts have nothing to do and open none.
    if (!(await db.$queryRawUnsafe<unknown[]>(select, done, after)).length) return changed;
    const rows = await db.$transaction(async (tx) => {
      const rows = await tx.$queryRawUnsafe<Array<{ id: string; url: string }>>(
        `${select} FOR UPDATE`,
        done,
        after,
      );
      for (const row of rows) {
        const fixed = fixUrlSecrets(row.url, fix);
        if (fixed === row.url) continue;
        await tx.$executeRawUnsafe(`UPDATE "${table}" SET "${column}" = $1 WHERE id = $2`, fixed, row.id);
        changed++;
      }
      return rows;
    });
    if (rows.length === 0) return changed;
    after = rows[rows.length - 1].id;
  }
}

/** PendingApproval snapshots' `url` (webhooks) and `webhookUrl` (intents), as sealUrls does. */
async function sealApprovalUrls(db: Db, done: string, fix: (v: string) => string): Promise<number> {
  const keys = ["url", "webhookUrl"] as const;
  const fixSnapshot = (snapshot: unknown) => {
    if (!snapshot || typeof snapshot !== "object" || Array.isArray(snapshot)) return snapshot;
    const out = { ...snapshot } as Record<string, unknown>;
    for (const key of keys) {
      if (typeof out[key] === "string") out[key] = fixUrlSecrets(out[key] as string, fix);
    }
    return out;
  };
  const json = (v: unknown) => v === null || v === undefined ? null : JSON.stringify(v);
  const where = ["before", "after"].flatMap((c) => keys.map((k) => UNSEALED_QUERY(`(${c}->>'${k}')`)));
  let changed = 0;
  let after = "";
  const select = `SELECT id, before, after FROM "PendingApproval"
    WHERE id > $2 AND (${where.join(" OR ")}) ORDER BY id LIMIT ${BATCH}`;
  for (;;) {
    if (!(await db.$queryRawUnsafe<unknown[]>(select, done, after)).length) return changed;
    const rows = await db.$transaction(async (tx) => {
      const rows = await tx.$queryRawUnsafe<Array<{ id: string; before: unknown; after: unknown }>>(
        `${select} FOR UPDATE`,
        done,
        after,
      );
      for (const row of rows) {
        const [before, afterSnap] = [fixSnapshot(row.before), fixSnapshot(row.after)];
        if (json(before) === json(row.before) && json(afterSnap) === json(row.after)) continue;
        await tx.$executeRaw`
          UPDATE "PendingApproval" SET before = ${json(before)}::jsonb, after = ${json(afterSnap)}::jsonb
           WHERE id = ${row.id}`;
        changed++;
      }
      return rows;
    });
    if (rows.length === 0) return changed;
    after = rows[rows.length - 1].id;
  }
}
