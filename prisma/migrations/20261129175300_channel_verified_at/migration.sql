-- When Meta's verify handshake last passed for a WhatsApp channel, so the console can say whether
-- the callback URL and verify token were accepted.
ALTER TABLE "Channel" ADD COLUMN "verifiedAt" TIMESTAMPTZ(3);
