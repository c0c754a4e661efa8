-- The agent's conversation list is ordered by last activity (lastMessageAt, id), newest first.
-- Every conversation is created with its first message, so the column is never empty: rows
-- without it get their newest message's time, else their creation time.
UPDATE "Conversation" c
SET "lastMessageAt" = COALESCE((SELECT max(m."createdAt") FROM "Message" m WHERE m."conversationId" = c.id), c."createdAt")
WHERE c."lastMessageAt" IS NULL;

-- AlterTable
ALTER TABLE "Conversation" ALTER COLUMN "lastMessageAt" SET NOT NULL,
ALTER COLUMN "lastMessageAt" SET DEFAULT CURRENT_TIMESTAMP;

-- DropIndex (the status index below starts with the same columns)
DROP INDEX "Conversation_agentId_status_idx";

-- CreateIndex
CREATE INDEX "Conversation_agentId_lastMessageAt_id_idx" ON "Conversation"("agentId", "lastMessageAt", "id");

-- CreateIndex
CREATE INDEX "Conversation_agentId_status_lastMessageAt_id_idx" ON "Conversation"("agentId", "status", "lastMessageAt", "id");
