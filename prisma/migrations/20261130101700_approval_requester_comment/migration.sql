-- AlterTable
ALTER TABLE "PendingApproval" ADD COLUMN     "decisionComment" TEXT;

-- An approval's proposer was a bare id: proposers deleted since then are forgotten, as the key now does.
UPDATE "PendingApproval" p SET "proposedById" = NULL
 WHERE "proposedById" IS NOT NULL AND NOT EXISTS (SELECT 1 FROM "User" u WHERE u.id = p."proposedById");

-- CreateIndex
CREATE INDEX "PendingApproval_proposedById_idx" ON "PendingApproval"("proposedById");

-- AddForeignKey
ALTER TABLE "PendingApproval" ADD CONSTRAINT "PendingApproval_proposedById_fkey" FOREIGN KEY ("proposedById") REFERENCES "User"("id") ON DELETE SET NULL ON UPDATE CASCADE;
