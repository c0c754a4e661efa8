-- CreateEnum
CREATE TYPE "MessageStatus" AS ENUM ('RECEIVED', 'PENDING', 'SENT', 'DELIVERED', 'READ', 'FAILED');

-- AlterEnum
ALTER TYPE "ChannelType" ADD VALUE 'API';

-- AlterEnum
-- This migration adds more than one value to an enum.
-- With PostgreSQL versions 11 and earlier, this is not possible
-- in a single migration. This can be worked around by creating
-- multiple migrations, each migration adding only one value to
-- the enum.


ALTER TYPE "MessageType" ADD VALUE 'LOCATION';
ALTER TYPE "MessageType" ADD VALUE 'OTHER';

-- AlterTable
ALTER TABLE "Channel" ADD COLUMN     "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;

-- AlterTable
ALTER TABLE "Conversation" ADD COLUMN     "humanReason" TEXT,
ADD COLUMN     "transferSummary" TEXT;

-- AlterTable
ALTER TABLE "Message" ADD COLUMN     "error" JSONB,
ADD COLUMN     "inputTokens" INTEGER,
ADD COLUMN     "mediaMimeType" TEXT,
ADD COLUMN     "outputTokens" INTEGER,
ADD COLUMN     "payload" JSONB,
ADD COLUMN     "status" "MessageStatus" NOT NULL DEFAULT 'RECEIVED',
ADD COLUMN     "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;

-- decisions.md names the customer CUSTOMER (Conversation API).
ALTER TYPE "SenderKind" RENAME VALUE 'CONTACT' TO 'CUSTOMER';
