/** Shared benchmark seeding: a user owning a new workspace, and the actor context to act as them. */
import type { ActorContext, Deps } from "../src/context.ts";
import { createUser, createWorkspaceFor } from "../src/workspaces/mod.ts";
import { buildApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { silentLogger } from "../src/shared/logger.ts";
import { createAgent } from "../src/agents/mod.ts";
import { createChannel } from "../src/channels/service.ts";

/**
 * The environment of every benchmark's app on `databaseUrl`: with DATABASE_URL set, JWT_SECRET and
 * SECRETS_KEY are required; receivers listen on 127.0.0.1.
 */
export function benchEnv(databaseUrl: string): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    JWT_SECRET: "bench-secret-bench-secret-bench-secret-000",
    SECRETS_KEY: btoa("bench-secrets-key-bench-secrets!"),
    OUTBOUND_ALLOWLIST: "127.0.0.1/32",
    LOG_LEVEL: "error",
  };
}

/**
 * The environment of a reply benchmark's server (inbound, media): production mode, every grouping
 * window at `windowMs`, the model stand-in at `modelUrl` (OpenAI-compatible, with /v1) and the Graph
 * stand-in at `graphUrl`.
 */
export function replyBenchEnv(
  databaseUrl: string,
  { windowMs, modelUrl, graphUrl }: { windowMs: number; modelUrl: string; graphUrl: string },
): Record<string, string> {
  return {
    ...benchEnv(databaseUrl),
    APP_ENV: "production",
    NODE_ENV: "production",
    GROUPING_FAST_MS: String(windowMs),
    GROUPING_MEDIUM_MS: String(windowMs),
    GROUPING_SLOW_MS: String(windowMs),
    OPENAI_API_KEY: "bench-key",
    OPENAI_BASE_URL: modelUrl,
    WHATSAPP_GRAPH_URL: graphUrl,
  };
}

export async function seedOwner(deps: Deps, email: string): Promise<ActorContext> {
  const user = await createUser(deps, { email, password: "bench-password" });
  const ws = await createWorkspaceFor(deps, user.id, "Bench");
  return {
    ...deps,
    actor: {
      kind: "user",
      userId: user.id,
      tokenId: null,
      workspaceId: ws.id,
      role: "OWNER",
      label: "bench",
    },
  };
}

/**
 * Seeds, with an app on `env` that runs no workers and is stopped after: a workspace owned by
 * `email`, an agent Ana answering FAST, and its WhatsApp channel of `phoneNumberId` signed with
 * `appSecret`. The channel's id (its webhook is `/webhooks/whatsapp/<id>`).
 */
export async function seedWhatsAppChannel(
  env: Record<string, string>,
  opts: { email: string; phoneNumberId: string; appSecret: string },
): Promise<string> {
  const seeder = await buildApp(loadConfig(env), { bootstrap: false, logger: silentLogger, workers: false });
  try {
    const ctx = await seedOwner(seeder.deps, opts.email);
    const agent = await createAgent(ctx, { name: "Ana", jobName: "Bench Co", messageGroupingTime: "FAST" });
    const channel = await createChannel(ctx, agent.id, {
      type: "WHATSAPP",
      label: "Bench",
      config: {
        phoneNumberId: opts.phoneNumberId,
        accessToken: "bench-token",
        appSecret: opts.appSecret,
        verifyToken: "bench-verify",
      },
    });
    return channel.id;
  } finally {
    await seeder.stop();
  }
}
