-- An outgoing message whose send began and whose outcome was never written (its sender died during
-- the channel call): it may have reached the customer, so it is not sent again.
ALTER TYPE "MessageStatus" ADD VALUE 'UNCONFIRMED';

-- When the channel call of a claimed outgoing message began (src/conversations/outbound.ts).
ALTER TABLE "Message" ADD COLUMN "sendStartedAt" TIMESTAMPTZ(3);

-- The reply sweep (src/conversations/pipeline/reply.ts sweepUnanswered) looks for customer messages
-- no reply has handled; only those are in this index. (Prisma's schema cannot declare a partial index.)
CREATE INDEX "Message_unanswered_idx" ON "Message"("conversationId")
  WHERE "senderKind" = 'CUSTOMER' AND "answeredAt" IS NULL;
