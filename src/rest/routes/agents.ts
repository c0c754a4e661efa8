/** Agents, prompt versions, intents and event webhooks (spec section 4, decisions.md "Agents"). */
import { Hono } from "hono";
import type { Deps } from "../../context.ts";
import * as agents from "../../agents/mod.ts";
import * as intents from "../../intents/mod.ts";
import * as webhooks from "../../webhooks/mod.ts";
import { actorOf, queryOf, readJson } from "../http.ts";

export function agentRoutes(deps: Deps): Hono {
  const r = new Hono();

  r.get("/api/agents", async (c) => c.json(await agents.listAgents(await actorOf(deps, c), queryOf(c))));
  r.post("/api/agents", async (c) => {
    const ctx = await actorOf(deps, c);
    return c.json(await agents.createAgent(ctx, await readJson(c)), 201);
  });
  r.get("/api/agents/:agentId", async (c) => {
    return c.json(await agents.getAgent(await actorOf(deps, c), c.req.param("agentId")));
  });
  r.put("/api/agents/:agentId", async (c) => {
    const ctx = await actorOf(deps, c);
    return c.json(await agents.replaceAgent(ctx, c.req.param("agentId"), await readJson(c)));
  });
  r.patch("/api/agents/:agentId/status", async (c) => {
    const ctx = await actorOf(deps, c);
    return c.json(await agents.setAgentStatus(ctx, c.req.param("agentId"), await readJson(c)));
  });
  r.put("/api/agents/:agentId/prompt", async (c) => {
    const ctx = await actorOf(deps, c);
    return c.json(await agents.updatePrompt(ctx, c.req.param("agentId"), await readJson(c)));
  });
  r.get("/api/agents/:agentId/prompt-versions", async (c) => {
    const ctx = await actorOf(deps, c);
    return c.json(await agents.listPromptVersions(ctx, c.req.param("agentId"), queryOf(c)));
  });
  r.post("/api/agents/:agentId/prompt-versions/:versionId/revert", async (c) => {
    const ctx = await actorOf(deps, c);
    const { agentId, versionId } = c.req.param();
    return c.json(await agents.revertPrompt(ctx, agentId, versionId, await readJson(c)));
  });
  r.delete("/api/agents/:agentId", async (c) => {
    await agents.deleteAgent(await actorOf(deps, c), c.req.param("agentId"));
    return c.body(null, 204);
  });

  r.get("/api/agents/:agentId/intents", async (c) => {
    const ctx = await actorOf(deps, c);
    return c.json(await intents.listIntents(ctx, c.req.param("agentId"), queryOf(c)));
  });
  r.post("/api/agents/:agentId/intents", async (c) => {
    const ctx = await actorOf(deps, c);
    return c.json(await intents.createIntent(ctx, c.req.param("agentId"), await readJson(c)), 201);
  });
  r.get("/api/agents/:agentId/intents/:intentId", async (c) => {
    const { agentId, intentId } = c.req.param();
    return c.json(await intents.getIntent(await actorOf(deps, c), agentId, intentId));
  });
  r.patch("/api/agents/:agentId/intents/:intentId", async (c) => {
    const ctx = await actorOf(deps, c);
    return c.json(await intents.updateIntent(ctx, c.req.param(), await readJson(c)));
  });
  r.delete("/api/agents/:agentId/intents/:intentId", async (c) => {
    await intents.deleteIntent(await actorOf(deps, c), c.req.param());
    return c.body(null, 204);
  });

  r.get("/api/agents/:agentId/webhooks", async (c) => {
    const ctx = await actorOf(deps, c);
    return c.json(await webhooks.listWebhooks(ctx, c.req.param("agentId"), queryOf(c)));
  });
  r.post("/api/agents/:agentId/webhooks", async (c) => {
    const ctx = await actorOf(deps, c);
    return c.json(await webhooks.createWebhook(ctx, c.req.param("agentId"), await readJson(c)), 201);
  });
  r.get("/api/agents/:agentId/webhooks/:webhookId", async (c) => {
    const { agentId, webhookId } = c.req.param();
    return c.json(await webhooks.getWebhook(await actorOf(deps, c), agentId, webhookId));
  });
  r.patch("/api/agents/:agentId/webhooks/:webhookId", async (c) => {
    const ctx = await actorOf(deps, c);
    return c.json(await webhooks.updateWebhook(ctx, c.req.param(), await readJson(c)));
  });
  r.post("/api/agents/:agentId/webhooks/:webhookId/rotate-secret", async (c) => {
    return c.json(await webhooks.rotateWebhookSecret(await actorOf(deps, c), c.req.param()));
  });
  r.delete("/api/agents/:agentId/webhooks/:webhookId", async (c) => {
    await webhooks.deleteWebhook(await actorOf(deps, c), c.req.param());
    return c.body(null, 204);
  });

  return r;
}
