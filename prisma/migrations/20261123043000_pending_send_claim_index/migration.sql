-- The stale-send sweep (src/conversations/outbound.ts sweepStaleSends) looks for outgoing messages
-- still PENDING under an old claim. Only messages being sent are in this index, so it stays tiny
-- and costs the other writes of Message nothing. (Prisma's schema cannot declare a partial index.)
CREATE INDEX "Message_pending_send_claim_idx" ON "Message"("sendClaimedAt")
  WHERE status = 'PENDING' AND "sendClaimedAt" IS NOT NULL;
