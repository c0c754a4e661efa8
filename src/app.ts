/**
 * The one composition root: buildApp(config) wires the database, services and transports and
 * returns { fetch, start, stop }. Tests call `fetch` without a port; main.ts calls `start`.
 */
import { Hono } from "hono";
import type { Config } from "./config.ts";
import type { Deps } from "./context.ts";
import { createPrisma, type Db } from "./db/client.ts";
import { fastPathOf } from "./db/fast_path.ts";
import { type EmbeddedDatabase, startEmbeddedPostgres } from "./db/embedded.ts";
import { applyMigrations } from "./db/migrate.ts";
import { bootstrapFirstOwner, resolveJwtSecret, resolveSecretBox } from "./db/bootstrap.ts";
import { sealStoredSecrets } from "./db/seal_secrets.ts";
import { jwtKeys } from "./auth/jwt.ts";
import { type Clock, systemClock } from "./shared/clock.ts";
import { createLogger, type Logger } from "./shared/logger.ts";
import { OutboundPolicy, type Resolver } from "./shared/outbound.ts";
import { restRoutes } from "./rest/router.ts";
import { clientGoneResponse, errorResponse, problem } from "./rest/errors.ts";
import { corsPolicy } from "./rest/cors.ts";
import { inRequestScope, isClientGone, requestIdFrom } from "./shared/request_scope.ts";
import { TcpPeerWatcher } from "./shared/tcp_peers.ts";
import { createGraphQLHandler } from "./graphql/yoga.ts";
import { buildSchema } from "./graphql/schema.ts";
import { readWithViews } from "./reads/views.ts";
import { EventBus } from "./shared/events.ts";
import { Jobs } from "./jobs/boss.ts";
import { startWebhookDeliveryWorker, webhookDeliveryQueue } from "./jobs/workers/webhook_delivery.ts";
import { startWebhookDeadLetterWorker, webhookDeadLetterQueue } from "./jobs/workers/webhook_dead_letter.ts";
import { maintenanceQueues, startMaintenanceWorkers } from "./jobs/workers/maintenance.ts";
import { approvalQueues, startApprovalWorkers } from "./jobs/workers/approvals.ts";
import { startTemplateWorkers, templateQueues } from "./jobs/workers/templates.ts";
import { replayQueues, startReplayWorker } from "./jobs/workers/replay.ts";
import { LiveReplies } from "./jobs/live_replies.ts";
import { firstAttemptsMade, webhookListener } from "./webhooks/listener.ts";
import { watchDeadDeliveryClaims } from "./webhooks/recovery.ts";
import { startWhatsAppInboundWorker, whatsappInboundQueue } from "./jobs/workers/whatsapp_inbound.ts";
import { conversationQueues, startConversationWorkers } from "./jobs/workers/conversations.ts";
import { replyWindowListener } from "./conversations/pipeline/window.ts";
import { mediaListener } from "./media/job.ts";
import { mediaQueue, startMediaWorker } from "./jobs/workers/media.ts";
import { openAiModel } from "./llm/openai.ts";
import type { LanguageModel } from "./llm/client.ts";
import { LiveHub } from "./live/hub.ts";
import { ChannelCache } from "./channels/cache.ts";
import { registerInstance } from "./db/instance.ts";
import { watchDeadClaims } from "./conversations/recovery.ts";
import { consoleRoutes } from "./console/routes.ts";
import { consoleSessionRoutes } from "./console/session_routes.ts";

const ROUTE_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"];

/** What the HTTP server knows of a connection (Deno.ServeHandlerInfo has it). */
export interface ConnectionInfo {
  remoteAddr: Deno.Addr;
}

/** Hono `env` of every request: the client's socket address (X-Forwarded-For is not trusted). */
export interface HttpBindings {
  clientAddress: string | null;
}

export interface App {
  deps: Deps;
  /**
   * What the job workers of the reply path run with (WhatsApp inbound, conversations, media): the
   * same deps, whose `db` does not wait for the disk at commit (synchronous_commit=off). A job's
   * work is made durable by the job's completion, a synchronous commit after it (WAL is flushed in
   * order), and a crash before that runs the job again; what must be on disk before it acts on the
   * outside says so itself (a WhatsApp send's start, conversations/sql.ts). Requests, whose answer
   * promises what they stored, keep `deps.db`.
   */
  workerDeps: Deps;
  /** `info` is absent when tests call it directly: the client address is then unknown. */
  fetch(request: Request, info?: ConnectionInfo): Promise<Response>;
  /** Listens on config.host:config.port (port 0 picks a free one); resolves once listening. */
  start(): Promise<{ port: number }>;
  stop(): Promise<void>;
}

export interface BuildOptions {
  clock?: Clock;
  logger?: Logger;
  /** Replace the Prisma client (tests that count SQL statements). */
  db?: Db;
  /** Skip first-owner creation (tests seed their own). */
  bootstrap?: boolean;
  /**
   * false: enqueue jobs but run no workers (another process, or the test, runs them). Unset: as
   * config.processRole says (every role but "http" runs them).
   */
  workers?: boolean;
  /** Replaces DNS for outbound calls (tests script the answers). */
  resolve?: Resolver;
  /** Replaces the language model (default: OpenAI-compatible, from config.openai). */
  llm?: LanguageModel;
}

export async function buildApp(config: Config, options: BuildOptions = {}): Promise<App> {
  const logger = options.logger ?? createLogger(config.logLevel);
  // The schema and the views of its declared types: the planner reads with them (REST, GraphQL,
  // OpenAPI and the domains' reads go through it); a declaration it cannot read fails here.
  readWithViews(buildSchema().views);
  let embedded: EmbeddedDatabase | undefined;
  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    embedded = await startEmbeddedPostgres({
      dir: `${config.dataDir}/postgres`,
      database: "switchboard",
      port: config.embeddedPgPort,
      logger,
    });
    databaseUrl = embedded.url;
    logger.info("embedded PostgreSQL is up", { dataDir: `${config.dataDir}/postgres` });
  }
  const { applied } = await applyMigrations(databaseUrl);
  if (applied.length) logger.info("applied migrations", { applied });

  const db = options.db ?? createPrisma(databaseUrl, { max: config.databasePoolSize });
  const workerDb = options.db ??
    createPrisma(databaseUrl, { max: config.databasePoolSize, synchronousCommit: false });
  // The data migration of the secret box: rows stored before it existed are sealed now.
  const secrets = await resolveSecretBox(config);
  const sealed = await sealStoredSecrets(db, secrets, "plaintext");
  if (Object.values(sealed).some((n) => n > 0)) logger.info("sealed stored secrets", sealed);
  const clock = options.clock ?? systemClock;
  const jobs = new Jobs(databaseUrl, logger);
  // The dead letter first: the delivery queue names it.
  await jobs.start([
    webhookDeadLetterQueue,
    webhookDeliveryQueue,
    ...maintenanceQueues,
    ...approvalQueues,
    ...templateQueues,
    ...replayQueues,
    whatsappInboundQueue,
    ...conversationQueues,
    mediaQueue,
  ]);
  // Before any worker: every claim this process takes carries its id, alive while its lock is held
  // (the webhook listener's first attempts are claims too).
  const instance = await registerInstance(databaseUrl, logger);
  const events = new EventBus(() => clock.now());
  events.subscribe(webhookListener(jobs, instance), firstAttemptsMade(db));
  events.subscribe(replyWindowListener({ jobs, clock, config }));
  events.subscribe(mediaListener(jobs));
  // Subscriptions of every process: NOTIFY in the publishing transaction, one LISTEN here.
  const live = new LiveHub<Deps>(databaseUrl, logger, { maxQueued: config.live.maxQueuedEvents });
  await live.start();
  events.subscribe(live.listener());
  const channels = new ChannelCache(db, secrets, databaseUrl, logger);
  await channels.start();
  const deps: Deps = {
    db,
    config,
    clock,
    logger,
    jwt: jwtKeys(await resolveJwtSecret(config), config.jwtTtlSeconds),
    outbound: new OutboundPolicy(config.outboundAllowlist, { resolve: options.resolve }),
    events,
    jobs,
    secrets,
    llm: options.llm ?? openAiModel(config.openai),
    live,
    channels,
    instance,
  };
  const workerDeps: Deps = { ...deps, db: workerDb };
  let stopWatchingClaims: (() => Promise<void>) | undefined;
  if (options.workers ?? config.processRole !== "http") {
    await startWebhookDeliveryWorker(jobs, deps);
    await startWebhookDeadLetterWorker(jobs, deps);
    await startMaintenanceWorkers(jobs, deps, { retentionDays: config.retentionDays });
    await startApprovalWorkers(jobs, deps);
    await startTemplateWorkers(jobs, deps);

    // Each step of a replay waits for the live work under way here (customers' posts being stored,
    // replies), for 50 of them at most: under a steady load a replay's work is spread thin between them.
    const live = new LiveReplies(50);
    await startWhatsAppInboundWorker(jobs, workerDeps, live);
    await startConversationWorkers(jobs, workerDeps, live);
    await startReplayWorker(jobs, deps, live);
    await startMediaWorker(jobs, workerDeps);
    const stopReplyClaims = watchDeadClaims(deps);
    const stopDeliveryClaims = watchDeadDeliveryClaims(deps);
    stopWatchingClaims = async () => void await Promise.all([stopReplyClaims(), stopDeliveryClaims()]);
  }
  if (options.bootstrap !== false) await bootstrapFirstOwner(deps);

  // A workers-only process keeps its port for the orchestrator's health probe alone.
  const serveApi = config.processRole !== "workers";
  const http = new Hono<{ Bindings: HttpBindings }>();
  // For the routes mounted here (the REST router has its own): an over-long GraphQL body.
  http.onError((err, c) => errorResponse(err, c, logger));
  if (serveApi && config.corsOrigins.length) http.use("*", corsPolicy(config.corsOrigins));
  http.get("/healthz", async () => {
    try {
      await db.$queryRawUnsafe("SELECT 1");
      return Response.json({ status: "ok", role: config.processRole });
    } catch {
      return problem(503, "UNAVAILABLE", "The database does not answer.");
    }
  });
  const graphql = serveApi ? createGraphQLHandler(deps) : undefined;
  if (graphql) {
    http.all("/graphql", (c) => graphql.fetch(c.req.raw, c.env.clientAddress));
    // Before the API: a browser's `GET /invite/{token}` gets the console, a JSON client the API.
    http.route("/", consoleRoutes());
    http.route("/", consoleSessionRoutes(deps));
    http.route("/", restRoutes(deps));
  }
  http.notFound((c) => {
    if (!serveApi) {
      return problem(
        404,
        "NOT_FOUND",
        `No route for ${c.req.method} ${c.req.path}: this process runs workers only.`,
      );
    }
    // A known path asked with another method: 405 with the methods it has (RFC 9110 `Allow`).
    const allowed = ROUTE_METHODS.filter((m) => http.router.match(m, c.req.path)[0].length > 0);
    if (allowed.length) {
      return problem(
        405,
        "METHOD_NOT_ALLOWED",
        `${c.req.method} is not allowed on ${c.req.path}.`,
        undefined,
        {
          allow: allowed.join(", "),
        },
      );
    }
    return problem(404, "NOT_FOUND", `No route for ${c.req.method} ${c.req.path}.`);
  });

  /**
   * Every request runs in its request scope (request id, client signal) and its response carries
   * `x-request-id`: the client's when sane, otherwise a new one.
   */
  const handle = (request: Request, info?: ConnectionInfo): Promise<Response> => {
    const addr = info?.remoteAddr;
    // graphql-ws: the socket outlives the request and its scope (an upgrade has no body to watch).
    if (info && graphql?.websocket.accepts(request) && new URL(request.url).pathname === "/graphql") {
      return Promise.resolve(
        graphql.websocket.upgrade(
          request,
          addr && "hostname" in addr ? addr.hostname : null,
          addr?.transport === "tcp" && localPort !== undefined ? { remote: addr, localPort } : undefined,
        ),
      );
    }
    const requestId = requestIdFrom(request.headers.get("x-request-id"));
    const bindings = { clientAddress: addr && "hostname" in addr ? addr.hostname : null };
    // Deno's own signal misses a disconnect once a request has a body (see tcp_peers.ts).
    const watch = addr && peers && hasBody(request) ? peers.watch(addr) : undefined;
    watch?.signal.addEventListener("abort", () => logger.debug("client connection closed", { requestId }));
    const signal = watch ? AbortSignal.any([request.signal, watch.signal]) : request.signal;
    return inRequestScope(requestId, signal, async () => {
      return withHeader(await http.fetch(request, bindings), "x-request-id", requestId);
    }).finally(() => watch?.stop());
  };

  let server: Deno.HttpServer | undefined;
  let peers: TcpPeerWatcher | undefined;
  /** The port the server listens on, once it does. */
  let localPort: number | undefined;
  return {
    deps,
    workerDeps,
    fetch: handle,
    start() {
      return new Promise((resolve) => {
        server = Deno.serve({
          hostname: config.host,
          port: config.port,
          onListen: (addr) => {
            peers = new TcpPeerWatcher(addr as Deno.NetAddr);
            localPort = (addr as Deno.NetAddr).port;
            resolve({ port: localPort });
          },
          // Only reached when something throws outside Hono's own error handling.
          onError: (err) => {
            if (isClientGone(err)) return clientGoneResponse();
            logger.error("unhandled error", { error: err });
            return problem(500, "INTERNAL", "Something went wrong on our side.");
          },
        }, handle);
      });
    },
    async stop() {
      // Live feeds first: their SSE responses complete and their sockets close, so shutdown ends.
      await live.stop();
      graphql?.websocket.closeAll();
      await server?.shutdown();
      peers?.close();
      await stopWatchingClaims?.();
      // Lets the attempts in hand finish (at most one attempt timeout); the rest are retried later.
      await jobs.stop();
      // Its claims are free for the other processes from here.
      await instance.stop();
      await channels.stop();
      deps.outbound.close();
      for (const client of new Set([db, workerDb])) {
        await client.$disconnect();
        await fastPathOf(client)?.close();
      }
      await embedded?.stop();
    },
  };
}

/** `response` with one more header (a copy when its headers are immutable, as fetch's are). */
function withHeader(response: Response, name: string, value: string): Response {
  try {
    response.headers.set(name, value);
    return response;
  } catch {
    const copy = new Response(response.body, response);
    copy.headers.set(name, value);
    return copy;
  }
}

/** Decided from the headers, leaving `request.body` untouched for the handler. */
function hasBody(request: Request): boolean {
  return Number(request.headers.get("content-length") ?? 0) > 0 || request.headers.has("transfer-encoding");
}
