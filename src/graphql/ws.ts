/**
 * GraphQL over WebSocket on /graphql: the graphql-ws protocol (`graphql-transport-ws`) through
 * `makeServer` with Deno's own sockets (`graphql-ws/use/deno` leaves the protocol empty on Deno 2).
 * Every operation is built from Yoga's envelop (`getEnveloped`), so a WebSocket operation has the
 * same context, document limits, error masking and resolvers as one over HTTP.
 *
 * `connection_init` carries `{ authorization, "x-workspace-id" }`, checked by the functions HTTP
 * uses (auth/authenticate.ts): bad credentials close with 4401, a refused workspace (not a member,
 * a token of another workspace) with 4403, a missing workspace with 4400. Each operation sees them
 * as the headers of a request, so roles are checked at subscribe as for HTTP. Without
 * `authorization`, the console's session cookie of the upgrade request is the credential, once
 * the upgrade came from this origin (auth/console_cookie.ts; else 4403 CSRF_REFUSED).
 *
 * Limits (config.live): operations open at once per socket (an `error` message LIVE_LIMIT_REACHED),
 * sockets per credential (close 4429) and per client address (HTTP 429 at the upgrade), both per
 * process; `connection_init` within a timeout (4408, graphql-ws); more than LIVE_MAX_BUFFERED_BYTES
 * written but not yet sent (a client that does not read) closes with 1013 and ends the socket's
 * operations at once.
 *
 * Keepalive: every LIVE_KEEPALIVE_SECONDS / 2, a socket quiet both ways since the last look gets a
 * graphql-ws `ping` (clients answer `pong`; the traffic also keeps proxies from closing an idle
 * connection). A socket is dead, and closed with 1001, only when it sent nothing for
 * LIVE_KEEPALIVE_SECONDS and none of what was queued for it in the last half of that left this
 * process: a late pong is no reason, since a client that is behind (a loaded machine, a slow link)
 * still takes its bytes. A peer that vanished with nothing queued for it is ended by TCP itself
 * (what was sent is never acknowledged). Deno's own keepalive (`idleTimeout`) is not used: it
 * closes on time alone, and on a busy process a pong waiting unread counts as none.
 *
 * A socket closed as slow or dead does not take the close frame either (it waits behind what is
 * queued): unless it is gone LIVE_SLOW_CONSUMER_GRACE_MS later, its TCP connection is reset
 * (src/shared/tcp_reset.ts), which frees the kernel's buffer and the socket's counts.
 */
import {
  CloseCode,
  GRAPHQL_TRANSPORT_WS_PROTOCOL,
  makeServer,
  MessageType,
  stringifyMessage,
} from "graphql-ws";
import { type ExecutionArgs, type ExecutionResult, getOperationAST, GraphQLError } from "graphql";
import type { YogaServerInstance } from "graphql-yoga";
import type { ActorContext, Deps } from "../context.ts";
import type { GraphQLContext } from "./context.ts";
import { authenticateActor, requireWorkspaceHeader } from "../auth/authenticate.ts";
import { requireSameOrigin, sessionCookieOf } from "../auth/console_cookie.ts";
import { AppError, forbidden } from "../shared/errors.ts";
import { problem } from "../rest/errors.ts";
import { shareKey } from "../live/shared_subscriptions.ts";
import type { CredentialHandle, Standing } from "../live/credentials.ts";
import { type Connection, reset } from "../shared/tcp_reset.ts";

/** The close code for a refused `connection_init`. */
function closeCodeOf(error: AppError): number {
  if (error.status === 401) return CloseCode.Unauthorized; // 4401
  if (error.status === 403) return CloseCode.Forbidden; // 4403
  return CloseCode.BadRequest; // 4400
}

/** Too many sockets for one credential (graphql-ws clients do not retry after it). */
export const CLOSE_TOO_MANY_SOCKETS = 4429;

/** A client that does not read what it is sent ("Try Again Later": graphql-ws clients may retry). */
export const CLOSE_SLOW_CONSUMER = 1013;
const SLOW_CONSUMER_REASON = "Slow consumer: too much queued for this socket";
/** A client that answers nothing and takes nothing ("Going Away", as Deno's own keepalive said it). */
export const CLOSE_DEAD = 1001;
const DEAD_REASON = "No response from ping frame.";
const PING = stringifyMessage({ type: MessageType.Ping });

/** UTF-8 bytes of a string (what Deno counts in `bufferedAmount`). */
function utf8Length(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c < 0xdc00) {
      n += 2; // a surrogate pair: 4 bytes for its two units
      i++;
    } else n += 2;
  }
  return n;
}

/** What the keepalive knows of an acknowledged socket. */
interface Liveness {
  socket: WebSocket;
  /** The client sent something since the last look. */
  heard: boolean;
  /** Something was sent to it since the last look (a ping is not counted). */
  active: boolean;
  /**
   * Not heard at the last look while bytes were queued for it: how many, and how many have been
   * queued since (counted only for such a socket).
   */
  suspect?: { buffered: number; sent: number };
  send(data: string): void;
  dead(): void;
}

interface Extra {
  /** The credentials of connection_init, as request headers for every operation. */
  headers: Headers;
  /** The console's session cookie of the upgrade: its credential, or why it is refused. */
  cookie?: { authorization: string; refused?: undefined } | { authorization?: undefined; refused: AppError };
  clientAddress: string | null;
  close(code: number, reason: string): void;
  /** Writes a message to the socket while it is open. */
  send(data: string): void;
  /** The credential of connection_init, kept current until the socket closes. */
  credential?: CredentialHandle<ActorContext>;
  /** The authorization counted against LIVE_MAX_SOCKETS_PER_CREDENTIAL. */
  counted?: string;
  closed: boolean;
  /** connection_init was accepted: the keepalive looks after the socket from now on. */
  acknowledged(): void;
}

/**
 * The server context /graphql's Yoga is created with (./yoga.ts): the client's socket address, and
 * the request's credential as an Authorization value (the header, or the console's session cookie;
 * unset: the header).
 */
export interface YogaServerContext {
  clientAddress?: string | null;
  authorization?: string | null;
}

/** What graphql-ws needs of Yoga: its envelop, built per operation. */
type YogaEnvelop = Pick<YogaServerInstance<YogaServerContext, Record<string, unknown>>, "getEnveloped">;
type Enveloped = ReturnType<YogaEnvelop["getEnveloped"]>;

const text = (value: unknown): string | null => typeof value === "string" ? value : null;

/** The response key of the operation's root field (the path of a refusal). */
function rootKey(args: ExecutionArgs): string {
  const field = getOperationAST(args.document, args.operationName)?.selectionSet.selections[0];
  return field?.kind === "Field" ? (field.alias ?? field.name).value : "subscription";
}

/**
 * What a member of a shared execution gets instead of the next result: its credential's refusal,
 * or FORBIDDEN when its role is no longer the one the execution reads with. Null: the result.
 */
function refusalOf(standing: Standing<ActorContext>, role: string, path: string): ExecutionResult | null {
  const error = standing.refused ??
    (standing.ctx.actor.role !== role
      ? forbidden("Your role in this workspace changed; subscribe again.")
      : null);
  if (!error) return null;
  return {
    data: null,
    errors: [
      new GraphQLError(error.message, {
        path: [path],
        extensions: { code: error.code, status: error.status },
      }),
    ],
  };
}

/** Adds one to `key`'s count unless it is at `max`; false when it is. */
function take(counts: Map<string, number>, key: string, max: number): boolean {
  const n = counts.get(key) ?? 0;
  if (n >= max) return false;
  counts.set(key, n + 1);
  return true;
}

function give(counts: Map<string, number>, key: string) {
  const n = (counts.get(key) ?? 1) - 1;
  if (n > 0) counts.set(key, n);
  else counts.delete(key);
}

export interface WebSocketHandler {
  /** Is this a WebSocket upgrade request? */
  accepts(request: Request): boolean;
  /**
   * Upgrades the request (from Deno.serve) and serves graphql-ws on it. `connection`: the TCP
   * connection it came on (the client's address and our port), to reset a slow consumer's.
   */
  upgrade(request: Request, clientAddress: string | null, connection?: Connection): Response;
  /** Closes every open socket (server stop). */
  closeAll(): void;
}

export function createWebSocketHandler(
  deps: Deps,
  yoga: YogaEnvelop,
): WebSocketHandler {
  const shared = deps.live.shared;
  const limits = deps.config.live;
  const perCredential = new Map<string, number>();
  const perAddress = new Map<string, number>();
  /** The socket and id of each operation's context (the subscribe hook only gets the execution args). */
  const operationOf = new WeakMap<object, { extra: Extra; id: string }>();
  const server = makeServer<Record<string, unknown> | undefined, Extra>({
    connectionInitWaitTimeout: limits.connectionInitTimeoutMs,
    execute: (args) => (args.rootValue as Enveloped).execute(args),
    // Identical subscriptions (same role, workspace, document, variables) share one execution; a
    // change to a socket's own credential (src/live/credentials.ts) refuses its operations at once.
    subscribe: async (args) => {
      const start = () => Promise.resolve((args.rootValue as Enveloped).subscribe(args));
      const context = args.contextValue as GraphQLContext;
      const operation = operationOf.get(context);
      const credential = operation?.extra.credential;
      if (!operation || !credential) return start();
      let actor;
      try {
        actor = (await context.actor()).actor;
      } catch {
        return start(); // refused as a read is: the execution answers the error
      }
      const { role, workspaceId } = actor;
      context.liveGroup = true;
      const key = shareKey({
        role,
        workspaceId,
        document: args.document,
        operationName: args.operationName,
        variables: args.variableValues,
      });
      const path = rootKey(args);
      // Each result is serialized once; every socket gets those bytes behind its own operation id
      // (graphql-ws's `next` message, written as graphql-ws writes it). Only a refusal goes through
      // graphql-ws's own loop.
      const head = `{"id":${JSON.stringify(operation.id)},"type":"next","payload":`;
      const refused = refusalOf(credential.standing, role, path);
      if (refused) return refused;
      const { send } = operation.extra;
      return shared.subscribe(key, start, {
        refusals: (refuse) =>
          credential.watch((standing) => {
            const refusal = refusalOf(standing, role, path);
            if (refusal) refuse(refusal);
          }),
        send: (payload) => send(head + payload + "}"),
      });
    },
    onConnect: async (ctx) => {
      const params = ctx.connectionParams ?? {};
      const extra = ctx.extra;
      const authorization = text(params.authorization ?? params.Authorization) ??
        extra.cookie?.authorization ??
        null;
      const workspaceId = text(params["x-workspace-id"]);
      let credential: CredentialHandle<ActorContext>;
      try {
        if (authorization === null && extra.cookie?.refused) throw extra.cookie.refused;
        const actor = await authenticateActor(deps, authorization, () => requireWorkspaceHeader(workspaceId));
        credential = await deps.live.credentials.track(deps, authorization, actor.workspaceId, actor);
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        extra.close(closeCodeOf(error), error.message.slice(0, 120));
        return false;
      }
      if (extra.closed) {
        credential.release();
        return false;
      }
      if (!take(perCredential, authorization!, limits.maxSocketsPerCredential)) {
        credential.release();
        extra.close(CLOSE_TOO_MANY_SOCKETS, "Too many sockets for this credential");
        return false;
      }
      extra.counted = authorization!;
      extra.credential = credential;
      extra.headers.set("authorization", authorization!);
      extra.headers.set("x-workspace-id", workspaceId!);
      extra.acknowledged();
      return true;
    },
    onSubscribe: async (ctx, id, payload) => {
      // This operation is already among them.
      if (Object.keys(ctx.subscriptions).length > limits.maxSubscriptionsPerSocket) {
        return [
          new GraphQLError(`At most ${limits.maxSubscriptionsPerSocket} operations at once on one socket.`, {
            extensions: { code: "LIVE_LIMIT_REACHED", status: 429 },
          }),
        ];
      }
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
      const contextValue = await enveloped.contextFactory();
      operationOf.set(contextValue, { extra: ctx.extra, id });
      const args: ExecutionArgs = {
        schema: enveloped.schema,
        operationName: payload.operationName,
        document,
        variableValues: payload.variables,
        contextValue,
        rootValue: enveloped,
      };
      return args;
    },
  });

  const open = new Set<WebSocket>();
  /** The acknowledged sockets the keepalive looks at. */
  const watched = new Map<WebSocket, Liveness>();
  let keepaliveTimer: ReturnType<typeof setInterval> | undefined;
  const look = () => {
    for (const state of watched.values()) {
      const { heard, active, suspect } = state;
      state.heard = state.active = false;
      if (heard) {
        state.suspect = undefined;
        continue;
      }
      const buffered = state.socket.bufferedAmount;
      // Nothing heard for two looks, and nothing queued for it left this process since the last.
      if (suspect && buffered >= suspect.buffered + suspect.sent) {
        state.dead();
        continue;
      }
      state.suspect = buffered > 0 ? { buffered, sent: 0 } : undefined;
      // Quiet both ways: a ping asks for a sign of life and keeps proxies from closing the connection.
      if (!active) {
        state.send(PING);
        state.active = false;
      }
    }
  };
  const watch = (state: Liveness) => {
    if (limits.keepaliveSeconds <= 0) return;
    watched.set(state.socket, state);
    if (keepaliveTimer === undefined) {
      keepaliveTimer = setInterval(look, limits.keepaliveSeconds * 500);
      Deno.unrefTimer(keepaliveTimer);
    }
  };
  const unwatch = (socket: WebSocket) => {
    watched.delete(socket);
    if (watched.size === 0 && keepaliveTimer !== undefined) {
      clearInterval(keepaliveTimer);
      keepaliveTimer = undefined;
    }
  };
  /** Sockets closed as slow consumers, until they are gone. */
  const slow = new Map<WebSocket, Connection>();
  /** Slow consumers whose grace ran out, reset together (one pass over the process' descriptors). */
  const toReset: Connection[] = [];
  const resetLater = (connection: Connection) => {
    if (toReset.push(connection) > 1) return;
    setTimeout(() => {
      const due = toReset.splice(0);
      if (reset(due) < due.length) {
        deps.logger.debug("graphql-ws slow consumer's connection not reset", { connections: due.length });
      }
    }, 0);
  };
  const cookieOf = (request: Request): Extra["cookie"] => {
    const token = sessionCookieOf(deps.config, request);
    if (token === null) return undefined;
    try {
      requireSameOrigin(deps.config, request, { upgrade: true });
      return { authorization: `Bearer ${token}` };
    } catch (error) {
      if (error instanceof AppError) return { refused: error };
      throw error;
    }
  };
  return {
    accepts: (request) => request.headers.get("upgrade")?.toLowerCase() === "websocket",
    upgrade(request, clientAddress, connection) {
      const address = clientAddress ?? "";
      if (!take(perAddress, address, limits.maxSocketsPerAddress)) {
        return problem(
          429,
          "LIVE_LIMIT_REACHED",
          `At most ${limits.maxSocketsPerAddress} WebSockets from one client address.`,
        );
      }
      const offered = (request.headers.get("sec-websocket-protocol") ?? "").split(",").map((p) => p.trim());
      const protocol = offered.includes(GRAPHQL_TRANSPORT_WS_PROTOCOL) ? GRAPHQL_TRANSPORT_WS_PROTOCOL : "";
      // Read before the upgrade: the request's headers are gone after it.
      const cookie = cookieOf(request);
      // Deno's keepalive off (idleTimeout 0): ours is above.
      const { socket, response } = Deno.upgradeWebSocket(request, {
        ...(protocol ? { protocol } : {}),
        idleTimeout: 0,
      });
      let closing = false;
      // graphql-ws may ask twice (our 4401, then its own 4403 for the refused connect): the first wins.
      const close = (code: number, reason: string) => {
        if (closing) return;
        closing = true;
        socket.close(code, reason);
      };
      let closed: ((code?: number, reason?: string) => Promise<void>) | undefined;
      let gone = false;
      let grace: ReturnType<typeof setTimeout> | undefined;
      /** Ends the socket's operations (their live streams unsubscribe) and its credential's checks. */
      const end = (code: number, reason: string) => {
        if (extra.closed) return;
        extra.closed = true;
        extra.credential?.release();
        void closed?.(code, reason);
      };
      /**
       * Closes a client that does not take what it is sent: its operations end now; the close frame
       * is queued behind what is already buffered, so the connection is reset after the grace.
       */
      const letGo = (code: number, reason: string) => {
        close(code, reason);
        end(code, reason);
        unwatch(socket);
        if (connection) {
          slow.set(socket, connection);
          grace = setTimeout(() => gone || resetLater(connection), limits.slowConsumerGraceMs);
        }
      };
      // Only called once the socket is open (graphql-ws and the operations start on open).
      const send = (data: string) => {
        if (extra.closed || closing) return;
        socket.send(data);
        liveness.active = true;
        if (liveness.suspect) liveness.suspect.sent += utf8Length(data);
        // What the client has not read stays in this process: past the bound it is a slow consumer.
        if (socket.bufferedAmount > limits.maxBufferedBytes) {
          deps.logger.warn("graphql-ws slow consumer closed", {
            clientAddress,
            bufferedBytes: socket.bufferedAmount,
          });
          letGo(CLOSE_SLOW_CONSUMER, SLOW_CONSUMER_REASON);
        }
      };
      const liveness: Liveness = {
        socket,
        heard: true,
        active: false,
        send,
        dead: () => {
          // A client gone without a word: not an error.
          deps.logger.debug("graphql-ws client took nothing and answered nothing: closed", {
            clientAddress,
            bufferedBytes: socket.bufferedAmount,
          });
          letGo(CLOSE_DEAD, DEAD_REASON);
        },
      };
      const extra: Extra = {
        headers: new Headers(),
        cookie,
        clientAddress,
        close,
        send,
        closed: false,
        acknowledged: () => watch(liveness),
      };
      socket.onopen = () => {
        open.add(socket);
        closed = server.opened({
          protocol,
          send,
          close,
          onMessage: (handle) => {
            socket.onmessage = async (event) => {
              liveness.heard = true;
              liveness.suspect = undefined;
              try {
                await handle(String(event.data));
              } catch (error) {
                deps.logger.error("graphql-ws message failed", { error });
                close(CloseCode.InternalServerError, "Internal server error");
              }
            };
          },
        }, extra);
      };
      // A slow consumer's socket still counts against its address and credential until it is gone.
      // Deno may report a reset connection's close twice (its read, then the pending close frame).
      socket.onclose = (event) => {
        if (gone) return;
        gone = true;
        clearTimeout(grace);
        slow.delete(socket);
        unwatch(socket);
        closing = true;
        open.delete(socket);
        give(perAddress, address);
        if (extra.counted !== undefined) give(perCredential, extra.counted);
        end(event.code, event.reason);
      };
      return response;
    },
    closeAll() {
      for (const socket of [...watched.keys()]) unwatch(socket);
      for (const socket of open) socket.close(1001, "Server stopping");
      // A slow consumer would not take that close frame either.
      reset([...slow.values()]);
    },
  };
}
