/**
 * A workspace's saved replies (docs/behaviour.md "Saved replies"): texts its people insert in
 * "Reply" by typing `/shortcut`. The functions behind ./capabilities.ts, with typed input; a
 * shortcut taken in the workspace answers 409 DUPLICATE_SHORTCUT, whether another request took it
 * long ago or a moment ago (the unique index decides).
 */
import type { z } from "zod";
import type { ActorContext } from "../context.ts";
import type { SavedReply } from "../generated/prisma/client.ts";
import { conflict, notFound } from "../shared/errors.ts";
import { assertId } from "../shared/validation.ts";
import type { createSavedReplySchema, updateSavedReplySchema } from "./schemas.ts";

const duplicate = (shortcut: string) =>
  conflict("DUPLICATE_SHORTCUT", `The workspace already has a saved reply /${shortcut}.`);

const isUniqueViolation = (e: unknown) => (e as { code?: string })?.code === "P2002";

/** Creates a saved reply (saved-replies:write); 409 DUPLICATE_SHORTCUT when the shortcut is taken. */
export async function createSavedReply(
  ctx: ActorContext,
  input: z.output<typeof createSavedReplySchema>,
): Promise<SavedReply> {
  try {
    return await ctx.db.savedReply.create({ data: { ...input, workspaceId: ctx.actor.workspaceId } });
  } catch (e) {
    if (isUniqueViolation(e)) throw duplicate(input.shortcut);
    throw e;
  }
}

/** Changes the fields given (saved-replies:write); 404 outside the workspace, 409 DUPLICATE_SHORTCUT. */
export async function updateSavedReply(
  ctx: ActorContext,
  id: string,
  input: z.output<typeof updateSavedReplySchema>,
): Promise<SavedReply> {
  const where = { id: assertId(id, "Saved reply"), workspaceId: ctx.actor.workspaceId };
  try {
    const { count } = await ctx.db.savedReply.updateMany({ where, data: input });
    if (count !== 1) throw notFound("Saved reply");
  } catch (e) {
    if (isUniqueViolation(e)) throw duplicate(input.shortcut!);
    throw e;
  }
  const row = await ctx.db.savedReply.findFirst({ where });
  if (!row) throw notFound("Saved reply");
  return row;
}

/** Deletes a saved reply (saved-replies:write); 404 outside the workspace. */
export async function deleteSavedReply(ctx: ActorContext, id: string): Promise<void> {
  const { count } = await ctx.db.savedReply.deleteMany({
    where: { id: assertId(id, "Saved reply"), workspaceId: ctx.actor.workspaceId },
  });
  if (count !== 1) throw notFound("Saved reply");
}
