-- The English customer-support template, beside SUPORTE (src/agents/template.ts).
-- AlterEnum
ALTER TYPE "AgentTemplate" ADD VALUE 'SUPPORT';
