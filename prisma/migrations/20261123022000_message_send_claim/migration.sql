-- An outgoing message being sent: when a sender (the reply right after its commit, or the
-- message-send job) claimed it. A second sender skips a fresh claim; a stale one (a crash) is taken over.
ALTER TABLE "Message" ADD COLUMN "sendClaimedAt" TIMESTAMPTZ(3);
