/**
 * Prisma's errors that mean "the data changed under this request" rather than "a bug": a row read a
 * moment ago and deleted before the write (P2025), a parent deleted before a child was inserted
 * (P2003 / SQLSTATE 23503), a unique value taken by a concurrent insert (P2002 / 23505), a deadlock
 * between two requests (P2034 / 40P01, 40001). Both adapters (rest/errors.ts, graphql/errors.ts)
 * pass every unknown error through dbAppError(), so services need no try/catch for races. Only
 * these codes are mapped: anything else stays a bug (500), so this never turns a programming error
 * into a 404.
 */
import { AppError, conflict, notFound } from "./errors.ts";

interface DriverCause {
  originalCode?: string;
  originalMessage?: string;
  constraint?: { index?: string; fields?: string[] };
}

interface KnownDbError {
  code: string;
  meta?: { modelName?: string; driverAdapterError?: { cause?: DriverCause } };
}

function known(err: unknown): KnownDbError | null {
  if (!(err instanceof Error)) return null;
  const code = (err as { code?: unknown }).code;
  return typeof code === "string" && /^P\d{4}$/.test(code) ? err as unknown as KnownDbError : null;
}

/** The PostgreSQL SQLSTATE behind a Prisma error (model queries and raw queries alike), if any. */
function sqlState(err: KnownDbError): string | undefined {
  const cause = err.meta?.driverAdapterError?.cause;
  if (cause?.originalCode) return cause.originalCode;
  if (err.code === "P2003") return "23503";
  if (err.code === "P2002") return "23505";
  return undefined;
}

/**
 * The model a foreign key points to, from its column: constraint `Agent_workspaceId_fkey` or field
 * `workspaceId` -> "Workspace". Our foreign keys are all named `<parent>Id`.
 */
function parentOf(cause: DriverCause | undefined): string {
  const column = cause?.constraint?.fields?.[0] ?? /^[A-Za-z]+_([A-Za-z]+)_fkey$/.exec(
    cause?.constraint?.index ?? "",
  )?.[1];
  const name = column?.replace(/Id$/, "");
  return name ? shownName(name[0].toUpperCase() + name.slice(1)) : "A record it refers to";
}

/** Model names as the services' own 404s spell them. */
const SHOWN: Record<string, string> = {
  EventWebhook: "Webhook",
  ApiToken: "API token",
  PromptVersion: "Prompt version",
  WebhookDelivery: "Delivery",
  Membership: "Member",
};
const shownName = (model: string) => SHOWN[model] ?? model;

/** Whether `err` is a foreign key violation by an insert or update (a parent row is missing). */
export function isMissingParent(err: unknown): boolean {
  const e = known(err);
  if (!e || sqlState(e) !== "23503") return false;
  // The other direction ("update or delete on table ... violates") is a delete blocked by a child:
  // not a missing row. Our relations cascade, so it would be a bug; it is left unmapped.
  const message = e.meta?.driverAdapterError?.cause?.originalMessage;
  return message === undefined || message.startsWith("insert or update");
}

/**
 * The AppError a known database error stands for, or undefined for anything else:
 * P2025 -> 404 NOT_FOUND (`<Model> not found.`); 23503 from an insert/update (P2003, or P2010/P2039
 * from a raw query) -> 404 NOT_FOUND naming the missing parent; 23505 (P2002, P2010) -> 409 DUPLICATE;
 * 40P01/40001 (P2034) -> 409 CONCURRENT_CHANGE.
 */
export function dbAppError(err: unknown): AppError | undefined {
  const e = known(err);
  if (!e) return undefined;
  if (e.code === "P2025") return notFound(shownName(e.meta?.modelName ?? "Record"));
  const state = sqlState(e);
  if (state === "23503" && isMissingParent(err)) return notFound(parentOf(e.meta?.driverAdapterError?.cause));
  if (state === "23505") return conflict("DUPLICATE", "A record with these values already exists.");
  // A deadlock or serialization failure (P2034): PostgreSQL chose this request to give way to a
  // concurrent one. Nothing was changed; the same request may be sent again.
  if (state === "40P01" || state === "40001" || e.code === "P2034") {
    return conflict(
      "CONCURRENT_CHANGE",
      "A concurrent change got in the way; nothing was changed. Try again.",
    );
  }
  return undefined;
}
