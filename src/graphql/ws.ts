/**
 * GraphQL over WebSocket on /graphql: the graphql-ws protocol (`graphql-transport-ws`) through
 * `makeServer` with Deno's own sockets (`graphql-ws/use/deno` leaves the protocol empty on Deno 2).
 * Every operation is built from Yoga's envelop (`getEnveloped`), so a WebSocket operation has the
 * same context, document limits, error masking and resolvers as one over HTTP.
 *
 * `connection_init` carries `{ authorization, "x-workspace-id" }`, checked by the functions HTTP
 * uses (auth/authenticate.ts): bad credentials close with 4401, a refused workspace (not a member,
 * a token of another workspace) with 4403, a missing workspace with 4400. Each operation sees them
 * as the headers of a request, so roles are checked at subscribe as for HTTP.
 */
import { CloseCode, GRAPHQL_TRANSPORT_WS_PROTOCOL, makeServer } from "graphql-ws";
import type { ExecutionArgs, GraphQLError } from "graphql";
import type { YogaServerInstance } from "graphql-yoga";
import type { Deps } from "../context.ts";
import { authenticateActor, requireWorkspaceHeader } from "../auth/authenticate.ts";
import { AppError } from "../shared/errors.ts";
import { shareKey } from "../live/shared_subscriptions.ts";

/** The close code for a refused `connection_init`. */
function closeCodeOf(error: AppError): number {
  if (error.status === 401) return CloseCode.Unauthorized; // 4401
  if (error.status === 403) return CloseCode.Forbidden; // 4403
  return CloseCode.BadRequest; // 4400
}

interface Extra {
  /** The credentials of connection_init, as request headers for every operation. */
  headers: Headers;
  clientAddress: string | null;
  close(code: number, reason: string): void;
}

type Enveloped = ReturnType<
  YogaServerInstance<Record<string, unknown>, Record<string, unknown>>["getEnveloped"]
>;

const text = (value: unknown): string | null => typeof value === "string" ? value : null;

export interface WebSocketHandler {
  /** Is this a WebSocket upgrade request? */
  accepts(request: Request): boolean;
  /** Upgrades the request (from Deno.serve) and serves graphql-ws on it. */
  upgrade(request: Request, clientAddress: string | null): Response;
  /** Closes every open socket (server stop). */
  closeAll(): void;
}

export function createWebSocketHandler(
  deps: Deps,
  // deno-lint-ignore no-explicit-any
  yoga: YogaServerInstance<any, any>,
): WebSocketHandler {
  const shared = deps.live.shared;
  const server = makeServer<Record<string, unknown> | undefined, Extra>({
    execute: (args) => (args.rootValue as Enveloped).execute(args),
    // Identical subscriptions (same credential, workspace, document, variables) share one execution.
    subscribe: (args) => {
      const start = () => Promise.resolve((args.rootValue as Enveloped).subscribe(args));
      const headers = (args.contextValue as { request: Request }).request.headers;
      const key = shareKey({
        authorization: headers.get("authorization"),
        workspaceId: headers.get("x-workspace-id"),
        document: args.document,
        operationName: args.operationName,
        variables: args.variableValues,
      });
      return key ? shared.subscribe(key, start) : start();
    },
    onConnect: async (ctx) => {
      const params = ctx.connectionParams ?? {};
      const authorization = text(params.authorization ?? params.Authorization);
      const workspaceId = text(params["x-workspace-id"]);
      try {
        await authenticateActor(deps, authorization, () => requireWorkspaceHeader(workspaceId));
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        ctx.extra.close(closeCodeOf(error), error.message.slice(0, 120));
        return false;
      }
      if (authorization) ctx.extra.headers.set("authorization", authorization);
      if (workspaceId) ctx.extra.headers.set("x-workspace-id", workspaceId);
      return true;
    },
    onSubscribe: async (ctx, _id, payload) => {
      const request = new Request("http://websocket.local/graphql", { headers: ctx.extra.headers });
      const enveloped: Enveloped = yoga.getEnveloped({
        request,
        clientAddress: ctx.extra.clientAddress,
        params: payload,
      });
      let document;
      try {
        document = enveloped.parse(payload.query);
      } catch (error) {
        return [error as GraphQLError];
      }
      const errors = enveloped.validate(enveloped.schema, document);
      if (errors.length) return errors as GraphQLError[];
      const args: ExecutionArgs = {
        schema: enveloped.schema,
        operationName: payload.operationName,
        document,
        variableValues: payload.variables,
        contextValue: await enveloped.contextFactory(),
        rootValue: enveloped,
      };
      return args;
    },
  });

  const open = new Set<WebSocket>();
  return {
    accepts: (request) => request.headers.get("upgrade")?.toLowerCase() === "websocket",
    upgrade(request, clientAddress) {
      const offered = (request.headers.get("sec-websocket-protocol") ?? "").split(",").map((p) => p.trim());
      const protocol = offered.includes(GRAPHQL_TRANSPORT_WS_PROTOCOL) ? GRAPHQL_TRANSPORT_WS_PROTOCOL : "";
      const { socket, response } = Deno.upgradeWebSocket(request, protocol ? { protocol } : {});
      let closing = false;
      // graphql-ws may ask twice (our 4401, then its own 4403 for the refused connect): the first wins.
      const close = (code: number, reason: string) => {
        if (closing) return;
        closing = true;
        socket.close(code, reason);
      };
      socket.onopen = () => {
        open.add(socket);
        const closed = server.opened({
          protocol,
          send: (data) => {
            if (socket.readyState === WebSocket.OPEN) socket.send(data);
          },
          close,
          onMessage: (handle) => {
            socket.onmessage = async (event) => {
              try {
                await handle(String(event.data));
              } catch (error) {
                deps.logger.error("graphql-ws message failed", { error });
                close(CloseCode.InternalServerError, "Internal server error");
              }
            };
          },
        }, { headers: new Headers(), clientAddress, close });
        socket.onclose = (event) => {
          closing = true;
          open.delete(socket);
          // Ends the socket's subscriptions (their live streams unsubscribe).
          closed(event.code, event.reason);
        };
      };
      return response;
    },
    closeAll() {
      for (const socket of open) socket.close(1001, "Server stopping");
    },
  };
}
