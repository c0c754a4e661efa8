-- What Meta bills a delivered message for, from its status webhooks: { category, billable }.
ALTER TABLE "Message" ADD COLUMN "pricing" JSONB;
