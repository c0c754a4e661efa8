-- What the workspace's messages cost (src/usage/sql.ts usageCounts) counts each channel's delivered
-- outbound messages by creation time: only those are in this index, so a month's usage reads them
-- and never the customer's messages or the ones still on their way. (Prisma's schema cannot declare
-- a partial index.)
CREATE INDEX "Message_delivered_idx" ON "Message"("channelId", "createdAt")
  WHERE direction = 'OUTBOUND' AND status IN ('DELIVERED', 'READ');

-- The same count starts from the workspace's channels.
CREATE INDEX "Channel_workspaceId_idx" ON "Channel"("workspaceId");
