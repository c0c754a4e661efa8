-- The reply pipeline (issue 9): when the grouping window closes, who is generating a reply, and
-- which customer messages a reply (or a decision not to reply) has handled.

-- AlterTable
ALTER TABLE "Conversation" ADD COLUMN     "replyClaimedAt" TIMESTAMPTZ(3),
ADD COLUMN     "replyDueAt" TIMESTAMPTZ(3);

-- AlterTable
ALTER TABLE "Message" ADD COLUMN     "answeredAt" TIMESTAMPTZ(3);
