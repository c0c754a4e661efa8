-- Server processes (src/db/instance.ts): each holds an advisory lock on its id while it lives.
CREATE TABLE "ServerInstance" (
    "id" SERIAL NOT NULL,
    "host" TEXT NOT NULL,
    "pid" INTEGER NOT NULL,
    "startedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ServerInstance_pkey" PRIMARY KEY ("id")
);

-- Which process holds a reply's claim and a send's claim: a dead one's are taken over at once
-- (src/conversations/recovery.ts).
ALTER TABLE "Conversation" ADD COLUMN "replyClaimedBy" INTEGER;
ALTER TABLE "Message" ADD COLUMN "sendClaimedBy" INTEGER;

-- The recovery check looks only at claimed conversations: a tiny index. (Prisma's schema cannot
-- declare a partial index.) Claimed sends are in "Message_pending_send_claim_idx" already.
CREATE INDEX "Conversation_reply_claim_idx" ON "Conversation"("replyClaimedBy")
  WHERE "replyClaimedAt" IS NOT NULL;
