-- The server process (src/db/instance.ts) making a delivery's first attempt itself, without a job:
-- once that process is gone, the attempt is handed to a job (src/webhooks/recovery.ts).
ALTER TABLE "WebhookDelivery" ADD COLUMN "claimedBy" INTEGER;

-- The recovery check looks only at claimed deliveries, a run's worth per process: a tiny index.
-- (Prisma's schema cannot declare a partial index.)
CREATE INDEX "WebhookDelivery_claim_idx" ON "WebhookDelivery"("claimedBy")
  WHERE "claimedBy" IS NOT NULL;
