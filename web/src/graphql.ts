/// <reference lib="dom" />
/**
 * The console's GraphQL client: urql with Graphcache (a normalized cache, so a mutation's answer
 * or a live event updates every screen that shows the same record) over the public `/graphql`,
 * with subscriptions over graphql-ws on the same path. Calls are signed by the session cookie
 * (./session.ts) and carry the CSRF header; the socket's upgrade carries the cookie. A refused
 * credential signs out. The cache's keys come from the schema (`schema.ts`). It is not given the
 * schema itself: that turns on partial results (a nullable field missing from the cache answered
 * as null while the server is asked), which would change what the screens show while they load.
 */
import { Client, type CombinedError, fetchExchange, mapExchange, subscriptionExchange } from "@urql/core";
import { cacheExchange } from "@urql/exchange-graphcache";
import { type Client as WsClient, createClient as createWsClient } from "graphql-ws";
import { embeddedKeys } from "./schema.ts";
import { CSRF_HEADERS } from "./session.ts";

export interface ApiHandlers {
  /** The credential is no longer valid (expired, logged out, revoked): sign out. */
  unauthenticated(): void;
  /** Refused in this workspace: the membership may be gone or the role changed. */
  forbidden(): void;
}

export interface Api {
  client: Client;
  /**
   * Calls `listener` each time the live feed's socket is (re)connected, so a screen reads its list
   * again: what happened while it was not subscribed yet (or cut off) was not sent to it.
   */
  onConnected(listener: () => void): () => void;
  close(): void;
}

/** A client acting, with the session cookie, in `workspaceId`. */
export function createApi(workspaceId: string, handlers: ApiHandlers): Api {
  const wsUrl = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/graphql`;
  const connectedListeners = new Set<() => void>();
  const ws: WsClient = createWsClient({
    url: wsUrl,
    connectionParams: { "x-workspace-id": workspaceId },
    lazy: true,
    on: {
      connected: () => connectedListeners.forEach((listener) => listener()),
      closed: (event) => {
        const code = (event as CloseEvent).code;
        if (code === 4401) handlers.unauthenticated();
        if (code === 4403) handlers.forbidden();
      },
    },
  });
  const onError = (error: CombinedError) => {
    const codes = error.graphQLErrors.map((e) => e.extensions?.code);
    if (codes.includes("UNAUTHENTICATED") || error.response?.status === 401) handlers.unauthenticated();
    else if (codes.includes("FORBIDDEN")) handlers.forbidden();
  };
  const client = new Client({
    url: "/graphql",
    requestPolicy: "cache-and-network",
    fetchOptions: () => ({ headers: { "x-workspace-id": workspaceId, ...CSRF_HEADERS } }),
    exchanges: [
      mapExchange({ onError }),
      cacheExchange({ keys: embeddedKeys() }),
      fetchExchange,
      subscriptionExchange({
        forwardSubscription: (request) => ({
          subscribe: (sink) => ({
            unsubscribe: ws.subscribe({ ...request, query: request.query ?? "" }, sink),
          }),
        }),
      }),
    ],
  });
  return {
    client,
    onConnected(listener) {
      connectedListeners.add(listener);
      return () => connectedListeners.delete(listener);
    },
    // dispose() rejects (with the CloseEvent) when the socket it waits for closed before it was
    // acknowledged: then there is nothing left to close.
    close: () => void Promise.resolve(ws.dispose()).catch(() => {}),
  };
}

/** The message of an operation's error, for the person looking at the screen. */
export function errorText(error: CombinedError | undefined): string | null {
  if (!error) return null;
  return error.graphQLErrors[0]?.message ?? error.networkError?.message ?? error.message;
}

/** The API's stable code of an operation's error (`STALE_APPROVAL`, `CONVERSATION_NOT_HUMAN`...). */
export const errorCode = (error: CombinedError | undefined): string | undefined =>
  error?.graphQLErrors[0]?.extensions?.code as string | undefined;
