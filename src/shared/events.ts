/**
 * The in-process domain event bus. Domains publish inside their own transaction; listeners run
 * right there, awaited in turn, so whatever they write or enqueue commits or rolls back with the
 * change that caused the event. Domains never import the listeners (webhooks, subscriptions).
 */
import type { Tx } from "../db/client.ts";

/** The events of spec section 6, as written there (the webhooks registry lists the same). */
export type EventType =
  | "message.received"
  | "message.sent"
  | "conversation.opened"
  | "conversation.closed"
  | "human.transferred"
  | "intent.fired";

/**
 * The spec's events, plus `webhook.test`, which only ever targets one webhook, and
 * `conversation.released` (HUMAN back to OPEN; data `{}`) and the approval events (data
 * `{ approvalId }`), which only live subscriptions follow: webhooks deliver the spec's events alone.
 */
export type DomainEventType = EventType | "webhook.test" | "conversation.released" | ApprovalEventType;

/** An approval was created, approved (executed), rejected, expired or failed (src/approvals/events.ts). */
export type ApprovalEventType =
  | "approval.created"
  | "approval.approved"
  | "approval.rejected"
  | "approval.expired"
  | "approval.failed";

export interface DomainEvent {
  type: DomainEventType;
  workspaceId: string;
  agentId: string;
  conversationId?: string | null;
  /** The event's `data` (decisions.md "Conversations" lists it per event). */
  data: Record<string, unknown>;
  /** Only for `webhook.test`: the one webhook to send it to. */
  webhookId?: string;
}

/** A published event as listeners see it: with the id the bus gave it and the time it happened. */
export interface PublishedEvent extends DomainEvent {
  id: string;
  occurredAt: Date;
}

export type EventListener = (tx: Tx, event: PublishedEvent) => Promise<void>;

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

  /**
   * Runs every listener inside `tx`, in the order they subscribed, and returns the event's id.
   * A listener that throws aborts the publish, and so the caller's transaction.
   */
  async publish(tx: Tx, event: DomainEvent): Promise<string> {
    const published: PublishedEvent = { ...event, id: crypto.randomUUID(), occurredAt: this.now() };
    for (const listener of this.#listeners) await listener(tx, published);
    return published.id;
  }

  /**
   * After the publishing transaction committed: waits until every listener has carried out its
   * follow-up of the event (e.g. the first webhook attempts were made), at most `timeoutMs`.
   */
  async settled(eventId: string, timeoutMs: number): Promise<void> {
    await Promise.all(this.#settledChecks.map((check) => check(eventId, timeoutMs)));
  }
}
