/**
 * The in-process domain event bus. Domains publish inside their own transaction, one event or a
 * batch; listeners run right there, so whatever they write or enqueue commits or rolls back with
 * the change that caused the events. Domains never import the listeners (webhooks, subscriptions).
 *
 * A batch costs one SQL round trip for what the listeners write about it (on the hot path a round
 * trip costs more than what these statements do): each listener may give its share as top-level
 * CTEs plus one expression over them (`statement`), the bus sends all shares as ONE statement, then
 * calls each listener's `after` in turn with the value of its expression. The listeners stay
 * unaware of each other: each names its CTEs with its own prefix, and no share can see what another
 * writes (one statement, one snapshot).
 */
import type { Prisma } from "../generated/prisma/client.ts";
import type { SqlTx } from "../db/client.ts";
import { publishBatch } from "./events_sql.ts";

/** The event types a webhook can subscribe to, named as the API names them (the webhooks registry lists the same). */
export type EventType =
  | "message.received"
  | "message.sent"
  | "conversation.opened"
  | "conversation.closed"
  | "human.transferred"
  | "intent.fired";

/**
 * The webhook event types, plus `webhook.test`, which only ever targets one webhook, and
 * `conversation.released` (HUMAN back to OPEN; data `{}`), `conversation.assigned` (its assignee
 * changed; data `{ assigneeId }`, null when unassigned) and the approval events (data
 * `{ approvalId }`), which only live subscriptions follow, and `message.media_pending` (a media
 * message stored, data `{ messageId }`: its grouping window starts, its media job is queued; its
 * `message.received` follows once the media work ended): webhooks deliver only the subscribable types.
 */
export type DomainEventType =
  | EventType
  | "webhook.test"
  | "conversation.released"
  | "conversation.assigned"
  | "message.media_pending"
  | ApprovalEventType;

/**
 * An approval was created, approved (executed), rejected, expired or failed (src/approvals/events.ts),
 * or its replay moved on: started, a case ended, it ended (src/replay/).
 */
export type ApprovalEventType =
  | "approval.created"
  | "approval.approved"
  | "approval.rejected"
  | "approval.expired"
  | "approval.failed"
  | "approval.replayed";

export interface DomainEvent {
  type: DomainEventType;
  workspaceId: string;
  agentId: string;
  conversationId?: string | null;
  /** The event's `data`, whose shape depends on the event type. */
  data: Record<string, unknown>;
  /** Only for `webhook.test`: the one webhook to send it to. */
  webhookId?: string;
  /**
   * Only for `message.received` of a media message, published when its media work ended: its
   * grouping window started when it was stored (`message.media_pending`), so it does not restart.
   */
  afterMedia?: boolean;
}

/** A published event as listeners see it: with the id the bus gave it and the time it happened. */
export interface PublishedEvent extends DomainEvent {
  id: string;
  occurredAt: Date;
}

/**
 * A listener's share of a batch's one statement. `ctes`: `name AS (...)` items joined by commas
 * (top level, so they may write; each name prefixed with the listener's module). `result`: one SQL
 * expression over them, whose JSON value the listener's `after` receives. A CTE that only reads (or
 * calls a function such as pg_notify) runs only as far as `result` reads it, so `result` must read
 * it whole.
 */
export interface StatementShare {
  ctes: Prisma.Sql;
  result: Prisma.Sql;
}

/** A listener of the bus; it sees every batch published, in the order of its events. */
export interface EventListener {
  /** Its share of the batch's statement, or undefined when it has nothing to write for these events. */
  statement?(events: readonly PublishedEvent[], tx: SqlTx): StatementShare | undefined;
  /**
   * After the statement, inside the transaction: `result` is its share's value (undefined without
   * one). Throwing aborts the publish, and so the caller's transaction.
   */
  after?(tx: SqlTx, events: readonly PublishedEvent[], result: unknown): Promise<void>;
}

/**
 * Resolves once a listener's follow-up of a committed event has been carried out (for webhooks: the
 * first attempt of each delivery made), or once `timeoutMs` has passed.
 */
export type SettledCheck = (eventId: string, timeoutMs: number) => Promise<void>;

export class EventBus {
  readonly #listeners: EventListener[] = [];
  readonly #settledChecks: SettledCheck[] = [];

  constructor(private readonly now: () => Date = () => new Date()) {}

  /** Registers a listener (and how to tell its follow-up is done); returns a function that removes it. */
  subscribe(listener: EventListener, settled?: SettledCheck): () => void {
    this.#listeners.push(listener);
    if (settled) this.#settledChecks.push(settled);
    return () => {
      const i = this.#listeners.indexOf(listener);
      if (i >= 0) this.#listeners.splice(i, 1);
      const j = settled ? this.#settledChecks.indexOf(settled) : -1;
      if (j >= 0) this.#settledChecks.splice(j, 1);
    };
  }

  /** Publishes one event (publishAll of one); returns its id. */
  async publish(tx: SqlTx, event: DomainEvent): Promise<string> {
    const [id] = await this.publishAll(tx, [event]);
    return id;
  }

  /**
   * Publishes `events`, in this order and 1 ms apart, inside `tx`: the listeners' shares as one statement, then
   * each listener's `after`, in the order they subscribed. Returns the events' ids, in order. A
   * listener that throws aborts the publish, and so the caller's transaction.
   */
  async publishAll(tx: SqlTx, events: readonly DomainEvent[]): Promise<string[]> {
    if (!events.length) return [];
    // One millisecond apart, so the events of a batch keep their order in reads by time.
    const at = this.now().getTime();
    const published: PublishedEvent[] = events.map((event, i) => ({
      ...event,
      id: crypto.randomUUID(),
      occurredAt: new Date(at + i),
    }));
    const listeners = [...this.#listeners];
    const shares = listeners.map((listener) => listener.statement?.(published, tx));
    const sent = shares.filter((share) => share !== undefined);
    const values: unknown[] = [];
    if (sent.length) {
      const [row] = await publishBatch.rows(tx, { shares: sent });
      values.push(...row.results);
    }
    for (const [i, listener] of listeners.entries()) {
      const result = shares[i] === undefined ? undefined : values.shift();
      await listener.after?.(tx, published, result);
    }
    return published.map((event) => event.id);
  }

  /**
   * After the publishing transaction committed: waits until every listener has carried out its
   * follow-up of the event (e.g. the first webhook attempts were made), at most `timeoutMs`.
   */
  async settled(eventId: string, timeoutMs: number): Promise<void> {
    await Promise.all(this.#settledChecks.map((check) => check(eventId, timeoutMs)));
  }
}
