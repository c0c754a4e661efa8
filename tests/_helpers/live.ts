/**
 * Live-feed clients for tests: a second server process on the same database, a graphql-ws client,
 * a subscription read one result at a time, waits on the live hub, and an SSE reader.
 */
import assert from "node:assert/strict";
import { type Client as WsClient, createClient } from "graphql-ws";
import { type App, buildApp } from "../../src/app.ts";
import { silentLogger } from "../../src/shared/logger.ts";
import type { Db } from "../../src/db/client.ts";
import { type TestApp, testConfig } from "./app.ts";
import { eventually } from "./receiver.ts";

/** A second server process on the same database (its own pool, bus and LISTEN connection). */
export async function secondApp(t: TestApp, options: { db?: Db } = {}): Promise<App> {
  const config = testConfig(t.db.url, { PORT: "0" });
  return await buildApp(config, { logger: silentLogger, bootstrap: false, workers: false, ...options });
}

/** A graphql-ws client of the server on `port`, authenticated by connection_init. */
export function wsClient(port: number, who: { token: string; workspaceId: string }): WsClient {
  return createClient({
    url: `ws://127.0.0.1:${port}/graphql`,
    connectionParams: { authorization: `Bearer ${who.token}`, "x-workspace-id": who.workspaceId },
    retryAttempts: 0,
    lazy: true,
  });
}

// deno-lint-ignore no-explicit-any
export type Result = { data?: any; errors?: any[] };

/** A subscription's results, one at a time. */
export function subscribe(client: WsClient, query: string, variables: Record<string, unknown> = {}) {
  const iterator = client.iterate<Result["data"]>({ query, variables })[Symbol.asyncIterator]();
  return {
    next: async (): Promise<Result> => {
      const r = await iterator.next();
      if (r.done) throw new Error("the subscription completed");
      return r.value as Result;
    },
    /** Resolves once the server completed the subscription. */
    ended: async () => assert.equal((await iterator.next()).done, true),
    stop: () => iterator.return?.(),
  };
}

/** Waits until `app` has `n` local subscribers (the subscribe message has been handled). */
export const subscribed = (app: App, n: number) =>
  eventually(() => Promise.resolve(app.deps.live.subscribers >= n || undefined));

/** Waits until `n` graphql-ws subscriptions of `app` share executions (one per role and document). */
export const members = (app: App, n: number) =>
  eventually(() => Promise.resolve(app.deps.live.shared.members === n || undefined));

/** Waits until every subscription of `app` has ended (its live stream unsubscribed). */
export const unsubscribed = (app: App) =>
  eventually(() => Promise.resolve(app.deps.live.subscribers === 0 || undefined));

/** A subscription over SSE (graphql-sse's distinct connections): the response to its POST. */
export function sseSubscribe(
  port: number,
  who: { token: string; workspaceId: string },
  query: string,
  variables?: Record<string, unknown>,
): Promise<Response> {
  return fetch(`http://127.0.0.1:${port}/graphql`, {
    method: "POST",
    headers: {
      accept: "text/event-stream",
      "content-type": "application/json",
      authorization: `Bearer ${who.token}`,
      "x-workspace-id": who.workspaceId,
    },
    body: JSON.stringify({ query, variables }),
  });
}

/** Reads server-sent events from a response body, one event at a time. */
export function sseEvents(body: ReadableStream<Uint8Array>) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  return {
    async next(): Promise<{ event: string; data: string }> {
      for (;;) {
        const end = buffer.indexOf("\n\n");
        if (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const lines = block.split("\n").filter((l) => !l.startsWith(":") && l);
          if (!lines.length) continue; // a keep-alive comment
          const field = (name: string) =>
            lines.filter((l) => l.startsWith(`${name}:`)).map((l) => l.slice(name.length + 1).trim()).join(
              "\n",
            );
          return { event: field("event"), data: field("data") };
        }
        const { value, done } = await reader.read();
        if (done) throw new Error("the stream ended");
        buffer += decoder.decode(value, { stream: true });
      }
    },
    cancel: () => reader.cancel(),
  };
}
