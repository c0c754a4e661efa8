/** Shared benchmark seeding: a user owning a new workspace, and the actor context to act as them. */
import type { ActorContext, Deps } from "../src/context.ts";
import { createUser, createWorkspaceFor } from "../src/workspaces/mod.ts";

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
