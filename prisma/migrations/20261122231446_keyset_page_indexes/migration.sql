-- DropIndex
DROP INDEX "Agent_workspaceId_createdAt_idx";

-- DropIndex
DROP INDEX "ApiToken_workspaceId_idx";

-- DropIndex
DROP INDEX "EventWebhook_agentId_idx";

-- DropIndex
DROP INDEX "Invite_workspaceId_idx";

-- DropIndex
DROP INDEX "Membership_workspaceId_idx";

-- DropIndex
DROP INDEX "PromptVersion_agentId_createdAt_idx";

-- DropIndex
DROP INDEX "WebhookDelivery_webhookId_createdAt_idx";

-- CreateIndex
CREATE INDEX "Agent_workspaceId_createdAt_id_idx" ON "Agent"("workspaceId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "ApiToken_workspaceId_createdAt_id_idx" ON "ApiToken"("workspaceId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "EventWebhook_agentId_createdAt_id_idx" ON "EventWebhook"("agentId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "Intent_agentId_createdAt_id_idx" ON "Intent"("agentId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "Invite_workspaceId_createdAt_id_idx" ON "Invite"("workspaceId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "Membership_workspaceId_createdAt_id_idx" ON "Membership"("workspaceId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "PromptVersion_agentId_createdAt_id_idx" ON "PromptVersion"("agentId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "WebhookDelivery_webhookId_createdAt_id_idx" ON "WebhookDelivery"("webhookId", "createdAt", "id");
