/** Shared benchmark seeding: a user owning a new workspace, and the actor context to act as them. */
import type { ActorContext, Deps } from "../src/context.ts";
import { createUser, createWorkspaceFor } from "../src/workspaces/mod.ts";

/** The secret box key of every benchmark's app (DATABASE_URL is set, so SECRETS_KEY is required). */
export const BENCH_SECRETS_KEY = btoa("bench-secrets-key-bench-secrets!");

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
