-- AlterTable
ALTER TABLE "Agent" ADD COLUMN     "enabledVision" BOOLEAN NOT NULL DEFAULT false;

-- AlterTable
ALTER TABLE "Message" ADD COLUMN     "mediaCaption" TEXT,
ADD COLUMN     "mediaError" TEXT,
ADD COLUMN     "mediaFileName" TEXT,
ADD COLUMN     "mediaPending" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "mediaSha256" TEXT,
ADD COLUMN     "mediaSize" INTEGER,
ADD COLUMN     "text" TEXT,
ADD COLUMN     "transcript" TEXT;

-- CreateTable
CREATE TABLE "MessageMediaBytes" (
    "messageId" TEXT NOT NULL,
    "bytes" BYTEA NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "MessageMediaBytes_pkey" PRIMARY KEY ("messageId")
);

-- AddForeignKey
ALTER TABLE "MessageMediaBytes" ADD CONSTRAINT "MessageMediaBytes_messageId_fkey" FOREIGN KEY ("messageId") REFERENCES "Message"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The reply's claim (src/conversations/pipeline/reply.ts) asks whether a conversation has media
-- still being fetched or understood; only those messages are in this index, so the question costs
-- next to nothing for conversations without media. (Prisma's schema cannot declare a partial index.)
CREATE INDEX "Message_media_pending_idx" ON "Message"("conversationId") WHERE "mediaPending";
