-- Replays of agent changes: each approval that changes what an agent says gets a replay (its id is
-- the approval's), whose cases are recent conversations answered again as the agent is and as
-- proposed; conversations pinned per agent are always among them (src/replay/).
-- CreateEnum
CREATE TYPE "ReplayStatus" AS ENUM ('PENDING', 'RUNNING', 'DONE', 'FAILED', 'OFF');

-- CreateEnum
CREATE TYPE "ReplayCaseStatus" AS ENUM ('PENDING', 'DONE', 'FAILED');

-- CreateEnum
CREATE TYPE "ReplayVerdict" AS ENUM ('SAME', 'CHANGED', 'REGRESSED');

-- AlterTable
ALTER TABLE "PendingApproval" ADD COLUMN     "replayId" TEXT;

-- CreateTable
CREATE TABLE "ApprovalReplay" (
    "id" TEXT NOT NULL,
    "workspaceId" TEXT NOT NULL,
    "agentId" TEXT NOT NULL,
    "status" "ReplayStatus" NOT NULL DEFAULT 'PENDING',
    "run" INTEGER NOT NULL DEFAULT 1,
    "total" INTEGER NOT NULL DEFAULT 0,
    "done" INTEGER NOT NULL DEFAULT 0,
    "same" INTEGER NOT NULL DEFAULT 0,
    "changed" INTEGER NOT NULL DEFAULT 0,
    "regressed" INTEGER NOT NULL DEFAULT 0,
    "failed" INTEGER NOT NULL DEFAULT 0,
    "inputTokens" INTEGER NOT NULL DEFAULT 0,
    "outputTokens" INTEGER NOT NULL DEFAULT 0,
    "credits" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "error" TEXT,
    "startedAt" TIMESTAMPTZ(3),
    "finishedAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ApprovalReplay_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ApprovalReplayCase" (
    "id" TEXT NOT NULL,
    "replayId" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "conversationId" TEXT NOT NULL,
    "pinned" BOOLEAN NOT NULL DEFAULT false,
    "status" "ReplayCaseStatus" NOT NULL DEFAULT 'PENDING',
    "customerMessages" TEXT[],
    "storedReply" TEXT NOT NULL,
    "storedEffects" JSONB NOT NULL,
    "currentReply" TEXT,
    "proposedReply" TEXT,
    "currentEffects" JSONB,
    "proposedEffects" JSONB,
    "verdict" "ReplayVerdict",
    "reason" TEXT,
    "error" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ApprovalReplayCase_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ReplayPin" (
    "id" TEXT NOT NULL,
    "agentId" TEXT NOT NULL,
    "conversationId" TEXT NOT NULL,
    "pinnedById" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ReplayPin_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "ApprovalReplay_workspaceId_idx" ON "ApprovalReplay"("workspaceId");

-- CreateIndex
CREATE UNIQUE INDEX "ApprovalReplayCase_replayId_position_key" ON "ApprovalReplayCase"("replayId", "position");

-- CreateIndex
CREATE INDEX "ReplayPin_conversationId_idx" ON "ReplayPin"("conversationId");

-- CreateIndex
CREATE UNIQUE INDEX "ReplayPin_agentId_conversationId_key" ON "ReplayPin"("agentId", "conversationId");

-- CreateIndex
CREATE UNIQUE INDEX "PendingApproval_replayId_key" ON "PendingApproval"("replayId");

-- AddForeignKey
ALTER TABLE "PendingApproval" ADD CONSTRAINT "PendingApproval_replayId_fkey" FOREIGN KEY ("replayId") REFERENCES "ApprovalReplay"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ApprovalReplay" ADD CONSTRAINT "ApprovalReplay_workspaceId_fkey" FOREIGN KEY ("workspaceId") REFERENCES "Workspace"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ApprovalReplayCase" ADD CONSTRAINT "ApprovalReplayCase_replayId_fkey" FOREIGN KEY ("replayId") REFERENCES "ApprovalReplay"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ReplayPin" ADD CONSTRAINT "ReplayPin_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ReplayPin" ADD CONSTRAINT "ReplayPin_conversationId_fkey" FOREIGN KEY ("conversationId") REFERENCES "Conversation"("id") ON DELETE CASCADE ON UPDATE CASCADE;


