-- Events of agents deleted before this foreign key existed (their deliveries follow by cascade).
DELETE FROM "DomainEvent" e WHERE e."agentId" IS NOT NULL AND NOT EXISTS (SELECT 1 FROM "Agent" a WHERE a.id = e."agentId");

-- CreateIndex
CREATE INDEX "DomainEvent_createdAt_idx" ON "DomainEvent"("createdAt");

-- CreateIndex
CREATE INDEX "DomainEvent_agentId_idx" ON "DomainEvent"("agentId");

-- CreateIndex
CREATE INDEX "WebhookDelivery_eventId_idx" ON "WebhookDelivery"("eventId");

-- CreateIndex
CREATE INDEX "WebhookDelivery_status_updatedAt_idx" ON "WebhookDelivery"("status", "updatedAt");

-- AddForeignKey
ALTER TABLE "DomainEvent" ADD CONSTRAINT "DomainEvent_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent"("id") ON DELETE CASCADE ON UPDATE CASCADE;
