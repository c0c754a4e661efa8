-- The supervisor's credit use per workspace and UTC day (issue 10): kept when the conversation is reset.

-- CreateTable
CREATE TABLE "SupervisorCreditDay" (
    "workspaceId" TEXT NOT NULL,
    "day" DATE NOT NULL,
    "messages" INTEGER NOT NULL DEFAULT 0,
    "inputTokens" INTEGER NOT NULL DEFAULT 0,
    "outputTokens" INTEGER NOT NULL DEFAULT 0,
    "cacheWriteTokens" INTEGER NOT NULL DEFAULT 0,
    "cacheReadTokens" INTEGER NOT NULL DEFAULT 0,
    "credits" DOUBLE PRECISION NOT NULL DEFAULT 0,

    CONSTRAINT "SupervisorCreditDay_pkey" PRIMARY KEY ("workspaceId","day")
);

-- AddForeignKey
ALTER TABLE "SupervisorCreditDay" ADD CONSTRAINT "SupervisorCreditDay_workspaceId_fkey" FOREIGN KEY ("workspaceId") REFERENCES "Workspace"("id") ON DELETE CASCADE ON UPDATE CASCADE;
