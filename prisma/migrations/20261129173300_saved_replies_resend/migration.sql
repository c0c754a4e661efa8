-- AlterTable
ALTER TABLE "Message" ADD COLUMN     "resentFromId" TEXT;

-- CreateTable
CREATE TABLE "SavedReply" (
    "id" TEXT NOT NULL,
    "workspaceId" TEXT NOT NULL,
    "shortcut" TEXT NOT NULL,
    "content" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "SavedReply_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "SavedReply_workspaceId_createdAt_id_idx" ON "SavedReply"("workspaceId", "createdAt", "id");

-- CreateIndex
CREATE UNIQUE INDEX "SavedReply_workspaceId_shortcut_key" ON "SavedReply"("workspaceId", "shortcut");

-- AddForeignKey
ALTER TABLE "SavedReply" ADD CONSTRAINT "SavedReply_workspaceId_fkey" FOREIGN KEY ("workspaceId") REFERENCES "Workspace"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- A failed message is sent again once: its copy names it (POST /api/messages/{id}/resend). Partial, so
-- the messages that copy nothing (nearly all) add nothing to the index. (Prisma's schema cannot
-- declare a partial index.)
CREATE UNIQUE INDEX "Message_resentFromId_key" ON "Message"("resentFromId") WHERE "resentFromId" IS NOT NULL;
