/**
 * The SQL of template sync (declared statements: src/db/statement.ts): a channel's templates
 * replaced by what Meta listed, and a status from Meta's status webhook.
 */
import { Prisma } from "../generated/prisma/client.ts";
import { col, query } from "../db/statement.ts";
import type { MetaTemplate } from "./graph_templates.ts";

/**
 * The channel's templates become `templates` (each with a fresh row id, used when it is new): new
 * ones inserted, known ones updated, the ones Meta no longer lists deleted, in one statement. The
 * ids are made in Meta's order, so new rows (of one createdAt) list in that order.
 */
export const replaceTemplates = query(
  { stored: col.integer, removed: col.integer },
  ({ workspaceId, channelId, templates, now }: {
    workspaceId: string;
    channelId: string;
    templates: ReadonlyArray<MetaTemplate & { id: string }>;
    now: Date;
  }) =>
    Prisma.sql`
    WITH incoming AS (
      SELECT * FROM jsonb_to_recordset(${JSON.stringify(templates)}::jsonb) AS t(id text, name text,
        language text, category text, status text, components jsonb, "parameterFormat" text, "metaId" text)
    ), upserted AS (
      INSERT INTO "WhatsAppTemplate" (id, "workspaceId", "channelId", name, language, category, status,
                                      components, "parameterFormat", "metaId", "createdAt", "syncedAt")
      SELECT id, ${workspaceId}::text, ${channelId}::text, name, language, category, status, components,
             "parameterFormat", "metaId", ${now}::timestamptz, ${now}::timestamptz
        FROM incoming
      ON CONFLICT ("channelId", name, language) DO UPDATE
        SET category = EXCLUDED.category, status = EXCLUDED.status, components = EXCLUDED.components,
            "parameterFormat" = EXCLUDED."parameterFormat", "metaId" = EXCLUDED."metaId",
            "syncedAt" = EXCLUDED."syncedAt"
      RETURNING 1
    ), removed AS (
      DELETE FROM "WhatsAppTemplate" w
       WHERE w."channelId" = ${channelId}::text
         AND NOT EXISTS (SELECT 1 FROM incoming i WHERE i.name = w.name AND i.language = w.language)
      RETURNING 1
    )
    SELECT (SELECT count(*) FROM upserted)::int AS stored, (SELECT count(*) FROM removed)::int AS removed`,
  [{ workspaceId: "w", channelId: "c", templates: [], now: new Date(0) }],
);

/**
 * A template's new status on the given channels. Meta's webhook writes the language with a hyphen
 * (`en-US`) where its template list has an underscore (`en_US`): both are the same language here.
 * Answers the channels that had the template.
 */
export const setTemplateStatus = query(
  { channelId: col.text },
  ({ channelIds, name, language, status }: {
    channelIds: readonly string[];
    name: string;
    language: string;
    status: string;
  }) =>
    Prisma.sql`
    UPDATE "WhatsAppTemplate" SET status = ${status}::text
     WHERE "channelId" = ANY(${channelIds}::text[]) AND name = ${name}::text
       AND lower(replace(language, '-', '_')) = lower(replace(${language}::text, '-', '_'))
    RETURNING "channelId"`,
  [{ channelIds: [], name: "n", language: "en_US", status: "APPROVED" }],
);
