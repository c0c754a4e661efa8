/**
 * Live events across server processes: an event-bus listener sends each live event with
 * `pg_notify` inside the publishing transaction (PostgreSQL delivers it on COMMIT, never for a
 * rollback), and one dedicated LISTEN connection per process hands what arrives to the local
 * subscribers of the event's workspace. The payload carries ids only (NOTIFY caps it at 8000 bytes);
 * each subscriber reads the rows itself, with its own role and selection. The same connection
 * LISTENs to the credential changes PostgreSQL announces (./credentials.ts), which arrive in commit
 * order with the events: an event is handed out only once the credentials a change before it named
 * have been read again, so a logout or a removed membership is seen by every later event, and no
 * credential is read per event.
 */
import pg from "pg";
import { Prisma } from "../generated/prisma/client.ts";
import type { DomainEventType, EventListener } from "../shared/events.ts";
import type { Logger } from "../shared/logger.ts";
import { SharedSubscriptions } from "./shared_subscriptions.ts";
import { CREDENTIALS_CHANNEL, LiveCredentials } from "./credentials.ts";
import type { CredentialDeps } from "../auth/authenticate.ts";
import { AppError } from "../shared/errors.ts";

/** The NOTIFY channel of live events. */
export const LIVE_CHANNEL = "switchboard_live";

/**
 * Domain events that subscriptions follow (`conversation.released` and `conversation.assigned` are
 * internal: no webhook has them).
 */
export const LIVE_EVENT_TYPES: ReadonlySet<DomainEventType> = new Set<DomainEventType>([
  "conversation.opened",
  "conversation.closed",
  "conversation.released",
  "conversation.assigned",
  "human.transferred",
  "message.received",
  "message.sent",
  "approval.created",
  "approval.approved",
  "approval.rejected",
  "approval.expired",
  "approval.failed",
  "approval.replayed",
]);

/** What crosses processes: the event's type and the ids it names. */
export interface LiveEvent {
  id: string;
  type: DomainEventType;
  workspaceId: string;
  agentId: string;
  conversationId: string | null;
  messageId: string | null;
  /** The approval of an `approval.*` event (its `data.approvalId`). */
  approvalId: string | null;
}

/** Events queued for one subscriber that does not keep up, unless the hub is given another bound. */
const MAX_QUEUED = 1_000;
const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5_000;

type Deliver = (event: LiveEvent) => void;

/**
 * The live events of this process' subscribers. `D`: the app's dependencies (src/context.ts's Deps),
 * which its credentials hand back with each subscriber's actor (./credentials.ts).
 */
export class LiveHub<D extends CredentialDeps> {
  readonly #byWorkspace = new Map<string, Set<Deliver>>();
  /** Identical graphql-ws subscriptions of this process, run once (./shared_subscriptions.ts). */
  readonly shared = new SharedSubscriptions();
  /** The credentials of local subscribers and sockets, kept current by the changes announced. */
  readonly credentials: LiveCredentials<D>;
  /** Events are handed out in the order they arrived (commit order), each once the credentials are read. */
  #order: Promise<void> = Promise.resolve();
  /** The LISTEN connection has been open before: a new one follows a loss. */
  #listened = false;
  /** Ends each open stream (at stop, so SSE responses and sockets complete). */
  readonly #streams = new Set<() => void>();
  #client: pg.Client | undefined;
  #stopped = false;
  #retryMs = RECONNECT_MIN_MS;
  #retryTimer: ReturnType<typeof setTimeout> | undefined;

  readonly #maxQueued: number;

  constructor(
    private readonly databaseUrl: string,
    private readonly logger: Logger,
    options: { maxQueued?: number } = {},
  ) {
    this.credentials = new LiveCredentials(logger);
    this.#maxQueued = options.maxQueued ?? MAX_QUEUED;
  }

  /**
   * The bus listener: one `pg_notify` per live event, in the events' order, in the publisher's
   * transaction, as its share of the batch's one statement (src/shared/events.ts). Only live event
   * types; the message id comes from `data.message.id` (the message events' payload), the approval
   * id from `data.approvalId`.
   */
  listener(): EventListener {
    return {
      statement(events) {
        const payloads = events.filter((event) => LIVE_EVENT_TYPES.has(event.type)).map((event) => {
          const message = event.data.message as { id?: unknown } | undefined;
          const live: LiveEvent = {
            id: event.id,
            type: event.type,
            workspaceId: event.workspaceId,
            agentId: event.agentId,
            conversationId: event.conversationId ?? null,
            messageId: typeof message?.id === "string" ? message.id : null,
            approvalId: typeof event.data.approvalId === "string" ? event.data.approvalId : null,
          };
          return JSON.stringify(live);
        });
        if (!payloads.length) return undefined;
        // pg_notify runs as the rows are read, in the array's order: the count reads them all.
        return {
          ctes: Prisma.sql`live_notified AS (
            SELECT pg_notify(${LIVE_CHANNEL}, payload)
              FROM jsonb_array_elements_text(${JSON.stringify(payloads)}::jsonb) AS payload)`,
          result: Prisma.sql`(SELECT count(*) FROM live_notified)`,
        };
      },
    };
  }

  /** Opens the LISTEN connection; resolves once it listens. */
  async start(): Promise<void> {
    await this.#connect();
  }

  async #connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.databaseUrl });
    client.on("notification", (n) => {
      if (n.channel === CREDENTIALS_CHANNEL && n.payload) return this.credentials.changed(n.payload);
      if (n.channel !== LIVE_CHANNEL || !n.payload) return;
      let event: LiveEvent;
      try {
        event = JSON.parse(n.payload) as LiveEvent;
      } catch (error) {
        this.logger.error("live event not dispatched", { error });
        return;
      }
      if (!this.#byWorkspace.has(event.workspaceId)) return;
      // Its turn, then the credentials read again for the changes announced before it, if any.
      this.#order = this.#order.then(() => this.credentials.ready()).then(() => this.#dispatch(event)).catch(
        (error) => this.logger.error("live event not dispatched", { error }),
      );
    });
    // A lost connection is reopened with backoff; events notified meanwhile are not seen here.
    client.on(
      "error",
      (error) => this.logger.warn("live LISTEN connection failed", { error: String(error) }),
    );
    client.on("end", () => {
      if (this.#client === client) this.#client = undefined;
      this.#scheduleReconnect();
    });
    await client.connect();
    await client.query(`LISTEN ${CREDENTIALS_CHANNEL}`);
    await client.query(`LISTEN ${LIVE_CHANNEL}`);
    if (this.#stopped) {
      await client.end();
      return;
    }
    this.#client = client;
    this.#retryMs = RECONNECT_MIN_MS;
    // Changes made while nobody listened went unheard.
    if (this.#listened) this.credentials.readAll();
    this.#listened = true;
  }

  #scheduleReconnect() {
    if (this.#stopped || this.#retryTimer !== undefined) return;
    const wait = this.#retryMs;
    this.#retryMs = Math.min(this.#retryMs * 2, RECONNECT_MAX_MS);
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      this.#connect().catch((error) => {
        this.logger.warn("live LISTEN reconnect failed", { error: String(error) });
        this.#scheduleReconnect();
      });
    }, wait);
  }

  #dispatch(event: LiveEvent) {
    const subscribers = this.#byWorkspace.get(event.workspaceId);
    if (!subscribers) return;
    for (const deliver of subscribers) deliver(event);
  }

  /** Calls `deliver` for each live event of the workspace until the returned function is called. */
  subscribe(workspaceId: string, deliver: Deliver): () => void {
    let set = this.#byWorkspace.get(workspaceId);
    if (!set) this.#byWorkspace.set(workspaceId, set = new Set());
    set.add(deliver);
    return () => {
      set.delete(deliver);
      if (set.size === 0 && this.#byWorkspace.get(workspaceId) === set) this.#byWorkspace.delete(workspaceId);
    };
  }

  /**
   * The workspace's live events that `select` keeps, as an async iterator (a GraphQL
   * subscription's source), in the order they were committed. `select` runs as each event
   * arrives and may be async (a read); it resolving to null skips the event, and it throwing ends
   * the iterator with that error. `return()` unsubscribes at once, even while `next()` waits;
   * `onEnd` runs once when the stream ends, however it ends. A consumer that lets more than the
   * hub's bound of events wait (an SSE response nobody reads) is let go: the stream unsubscribes
   * and ends with LIVE_LIMIT_REACHED, rather than silently dropping events or holding them.
   */
  stream<T>(
    workspaceId: string,
    select: (event: LiveEvent) => T | null | Promise<T | null>,
    onEnd?: () => void,
  ): AsyncIterableIterator<T> {
    const queue: Promise<T | null>[] = [];
    let wake: (() => void) | undefined;
    let done = false;
    /** Why the stream ended, thrown once by next(). */
    let failure: unknown;
    const maxQueued = this.#maxQueued;
    const unsubscribe = this.subscribe(workspaceId, (event) => {
      if (done) return;
      if (queue.length >= maxQueued) {
        this.logger.warn("live slow consumer let go", { workspaceId, queued: queue.length });
        void finish(
          new AppError(
            "LIVE_LIMIT_REACHED",
            429,
            `Slow consumer: more than ${maxQueued} events waited for this subscription; subscribe again.`,
          ),
        );
        return;
      }
      let value: Promise<T | null>;
      try {
        value = Promise.resolve(select(event));
      } catch (error) {
        value = Promise.reject(error);
      }
      value.catch(() => {}); // seen by next(), which rethrows it
      queue.push(value);
      wake?.();
    });
    const finish = (error?: unknown): Promise<IteratorResult<T>> => {
      if (!done) {
        onEnd?.();
        failure = error;
      }
      done = true;
      unsubscribe();
      this.#streams.delete(stop);
      queue.length = 0;
      wake?.();
      return Promise.resolve({ value: undefined, done: true });
    };
    const stop = () => void finish();
    this.#streams.add(stop);
    const next = async (): Promise<IteratorResult<T>> => {
      for (;;) {
        if (done) {
          if (failure === undefined) return { value: undefined, done: true };
          const error = failure;
          failure = undefined;
          throw error;
        }
        const head = queue.shift();
        if (!head) {
          await new Promise<void>((resolve) => wake = resolve);
          wake = undefined;
          continue;
        }
        let value: T | null;
        try {
          value = await head;
        } catch (error) {
          await finish();
          throw error;
        }
        if (value !== null) return { value, done: false };
      }
    };
    return {
      next,
      return: () => finish(),
      throw: (error) => finish().then(() => Promise.reject(error)),
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }

  /** Local subscribers (bench and tests). */
  get subscribers(): number {
    let n = 0;
    for (const set of this.#byWorkspace.values()) n += set.size;
    return n;
  }

  /** Ends every stream and closes the LISTEN connection; no reconnect after this. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.credentials.stop();
    for (const finish of [...this.#streams]) finish();
    clearTimeout(this.#retryTimer);
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => {});
  }
}
