/**
 * The request scope: the request id and whether the client is still there, carried through every
 * await of a request with AsyncLocalStorage, so the logger and the database layer can read them
 * without threading them through every call.
 */
import { AsyncLocalStorage } from "node:async_hooks";

export interface RequestScope {
  readonly requestId: string;
  /** Aborted when the client went away before its response was handed over. */
  readonly signal: AbortSignal;
  /**
   * False once the response is handed over. Async context also flows into work the request only
   * started (a timer, a pooled socket's callbacks); that work is not the request's any more.
   */
  active: boolean;
}

const storage = new AsyncLocalStorage<RequestScope>();

/** The work of a request whose client has gone: stopped, not an error (nobody reads the answer). */
export class ClientGoneError extends Error {
  override name = "ClientGoneError";
  constructor() {
    super("The client closed the connection before the response.");
  }
}

/** Printable ASCII without spaces, at most 128 characters: safe to log and to echo in a header. */
const SANE_ID = /^[\x21-\x7e]{1,128}$/;

/** The client's `x-request-id` when it is sane, otherwise a new one. */
export function requestIdFrom(header: string | null): string {
  return header !== null && SANE_ID.test(header) ? header : crypto.randomUUID();
}

/** The scope of the request being handled, if any (never one whose response is out). */
export function currentScope(): RequestScope | undefined {
  const scope = storage.getStore();
  return scope?.active ? scope : undefined;
}

/**
 * Runs `handle` in a scope whose signal follows `clientSignal` only until `handle` has produced
 * its response: work started by the request that outlives it (a timer, a listener) is neither cut
 * off by a later disconnect nor logged under the request's id.
 */
export async function inRequestScope<T>(
  requestId: string,
  clientSignal: AbortSignal | undefined,
  handle: () => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  const onAbort = () => controller.abort();
  if (clientSignal?.aborted) controller.abort();
  else clientSignal?.addEventListener("abort", onAbort, { once: true });
  const scope: RequestScope = { requestId, signal: controller.signal, active: true };
  try {
    return await storage.run(scope, handle);
  } finally {
    scope.active = false;
    clientSignal?.removeEventListener("abort", onAbort);
  }
}

/** Throws ClientGoneError when the current request's client has gone (a no-op outside requests). */
export function throwIfClientGone(): void {
  if (currentScope()?.signal.aborted) throw new ClientGoneError();
}

/**
 * The client disconnected: our ClientGoneError, or whatever the runtime throws while the request's
 * client is known to be gone (reading a body it no longer sends). Not an error: debug only.
 */
export function isClientGone(err: unknown): boolean {
  return err instanceof ClientGoneError || (currentScope()?.signal.aborted ?? false);
}

/** Runs `fn` outside any request scope (background work that a request merely triggers). */
export function detachedFromRequest<T>(fn: () => T): T {
  return storage.exit(fn);
}

/** The problem+json `instance` of the current request: `urn:request:<id>` (RFC 9457 §3.1.5). */
export function requestInstance(): string | undefined {
  const id = currentScope()?.requestId;
  return id === undefined ? undefined : `urn:request:${encodeURIComponent(id)}`;
}
