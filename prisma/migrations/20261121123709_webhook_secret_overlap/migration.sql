-- AlterTable
ALTER TABLE "EventWebhook" ADD COLUMN     "previousSecretExpiresAt" TIMESTAMPTZ(3),
ADD COLUMN     "previousSigningSecret" TEXT;
