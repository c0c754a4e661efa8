-- WhatsApp message templates: synced per channel from its business account, sent on conversations
-- (as TEMPLATE messages) and as an agent's reminder outside the 24-hour window.
ALTER TYPE "MessageType" ADD VALUE 'TEMPLATE';

ALTER TABLE "Channel" ADD COLUMN "businessAccountId" TEXT;
CREATE INDEX "Channel_businessAccountId_idx" ON "Channel"("businessAccountId");

ALTER TABLE "Agent" ADD COLUMN "reminderTemplate" JSONB;
ALTER TABLE "Message" ADD COLUMN "template" JSONB;

CREATE TABLE "WhatsAppTemplate" (
    "id" TEXT NOT NULL,
    "workspaceId" TEXT NOT NULL,
    "channelId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "language" TEXT NOT NULL,
    "category" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "components" JSONB NOT NULL,
    "parameterFormat" TEXT NOT NULL,
    "metaId" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "syncedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "WhatsAppTemplate_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "WhatsAppTemplate_channelId_name_language_key" ON "WhatsAppTemplate"("channelId", "name", "language");
CREATE INDEX "WhatsAppTemplate_workspaceId_idx" ON "WhatsAppTemplate"("workspaceId");
ALTER TABLE "WhatsAppTemplate" ADD CONSTRAINT "WhatsAppTemplate_workspaceId_fkey" FOREIGN KEY ("workspaceId") REFERENCES "Workspace"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "WhatsAppTemplate" ADD CONSTRAINT "WhatsAppTemplate_channelId_fkey" FOREIGN KEY ("channelId") REFERENCES "Channel"("id") ON DELETE CASCADE ON UPDATE CASCADE;
