-- CreateTable
CREATE TABLE "ConversationRead" (
    "conversationId" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "readAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "ConversationRead_pkey" PRIMARY KEY ("conversationId","userId")
);

-- CreateIndex
CREATE INDEX "ConversationRead_userId_idx" ON "ConversationRead"("userId");

-- CreateIndex
CREATE INDEX "Conversation_workspaceId_status_lastMessageAt_id_idx" ON "Conversation"("workspaceId", "status", "lastMessageAt", "id");

-- CreateIndex
CREATE INDEX "Conversation_assignedUserId_lastMessageAt_id_idx" ON "Conversation"("assignedUserId", "lastMessageAt", "id");

-- The assignee is a member of the conversation's workspace: anyone else held nothing.
UPDATE "Conversation" c SET "assignedUserId" = NULL
 WHERE c."assignedUserId" IS NOT NULL AND NOT EXISTS (
   SELECT 1 FROM "Membership" m
    WHERE m."workspaceId" = c."workspaceId" AND m."userId" = c."assignedUserId" AND m.role <> 'VIEWER');

-- AddForeignKey
ALTER TABLE "Conversation" ADD CONSTRAINT "Conversation_assignedUserId_fkey" FOREIGN KEY ("assignedUserId") REFERENCES "User"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ConversationRead" ADD CONSTRAINT "ConversationRead_conversationId_fkey" FOREIGN KEY ("conversationId") REFERENCES "Conversation"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ConversationRead" ADD CONSTRAINT "ConversationRead_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- A member's unread count is their conversation's customer messages after a time: only those are in
-- this index, so the count reads it alone. (Prisma's schema cannot declare a partial index.)
CREATE INDEX "Message_customer_idx" ON "Message"("conversationId", "createdAt")
  WHERE "senderKind" = 'CUSTOMER';

-- The workspace's search (conversations by contact name, address and message text) matches
-- substrings through trigram indexes, never a scan of the messages. pg_trgm ships with PostgreSQL
-- (contrib) and is a trusted extension: the database's owner may create it.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX "Message_content_trgm_idx" ON "Message" USING gin ("content" gin_trgm_ops);
CREATE INDEX "Contact_name_trgm_idx" ON "Contact" USING gin ("name" gin_trgm_ops);
CREATE INDEX "Contact_externalId_trgm_idx" ON "Contact" USING gin ("externalId" gin_trgm_ops);
