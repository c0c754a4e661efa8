/**
 * One execution for identical subscriptions: operations with the same role, workspace, document,
 * operation name and variables get the same results (rows are read with the workspace and role
 * only, and the same selection), so the first one runs and later ones join its results. Each
 * member has its own queue, and may be refused at any time (its credential was revoked or its role
 * changed): the refusal is its last result, and it leaves. Nothing about a member is checked per
 * result. The execution ends when its last member leaves. A result is serialized once, for every
 * member that writes JSON straight to its client.
 */
import type { DocumentNode, ExecutionResult } from "graphql";

type Results = AsyncIterator<ExecutionResult>;

/** How one member takes the shared results. */
export interface MemberOptions {
  /**
   * Called once with the member's `refuse`, which ends the member with that result (its last);
   * returns what stops calling it. A refusal due when the member joins is the caller's to answer.
   */
  refusals?: (refuse: (refusal: ExecutionResult) => void) => () => void;
  /**
   * Sends a result, given as JSON, straight to the member's client. Each result is serialized
   * once for every member that has this, and never goes through the member's iterator (which then
   * yields only a refusal, or ends).
   */
  send?: (payloadJson: string) => void;
}

interface Member {
  /** Takes a result as JSON, straight to its client (MemberOptions.send); or else as an object. */
  send?: (payloadJson: string) => void;
  push(result: ExecutionResult): void;
  end(error?: unknown): void;
}

const documentIds = new WeakMap<DocumentNode, number>();
let nextDocumentId = 0;

/** The key of identical operations of one role in one workspace. */
export function shareKey(options: {
  role: string;
  workspaceId: string;
  document: DocumentNode;
  operationName?: string | null;
  variables?: unknown;
}): string {
  let id = documentIds.get(options.document);
  if (id === undefined) documentIds.set(options.document, id = nextDocumentId++);
  return JSON.stringify([
    options.role,
    options.workspaceId,
    id,
    options.operationName ?? null,
    options.variables ?? null,
  ]);
}

type Entry = { members: Set<Member>; source: Results };

export class SharedSubscriptions {
  readonly #running = new Map<string, Entry>();
  /** Executions being started: identical operations arriving meanwhile wait for them and join. */
  readonly #starting = new Map<string, Promise<Entry | null>>();

  /**
   * The results of `key`: joins a running (or starting) execution, or calls `start` and shares its
   * results when they are a stream (a single result, such as a refusal, is not shared).
   */
  async subscribe(
    key: string,
    start: () => Promise<AsyncIterable<ExecutionResult> | ExecutionResult>,
    options: MemberOptions = {},
  ): Promise<AsyncIterableIterator<ExecutionResult> | ExecutionResult> {
    for (;;) {
      const running = this.#running.get(key);
      if (running) return this.#join(key, running, options);
      const pending = this.#starting.get(key);
      if (!pending) break;
      // The first gave a single result (a refusal): this one runs on its own, unshared.
      if (!(await pending)) return await start() as AsyncIterableIterator<ExecutionResult> | ExecutionResult;
    }
    let settle!: (entry: Entry | null) => void;
    const starting = new Promise<Entry | null>((resolve) => settle = resolve);
    this.#starting.set(key, starting);
    try {
      const result = await start();
      if (!(Symbol.asyncIterator in result)) {
        settle(null);
        return result;
      }
      const entry: Entry = { members: new Set<Member>(), source: result[Symbol.asyncIterator]() };
      this.#running.set(key, entry);
      const member = this.#join(key, entry, options);
      void this.#pump(key, entry);
      settle(entry);
      return member;
    } catch (error) {
      settle(null);
      throw error;
    } finally {
      if (this.#starting.get(key) === starting) this.#starting.delete(key);
    }
  }

  /** Operations sharing the running executions (tests and the bench). */
  get members(): number {
    let n = 0;
    for (const entry of this.#running.values()) n += entry.members.size;
    return n;
  }

  async #pump(key: string, entry: Entry) {
    try {
      for (;;) {
        const next = await entry.source.next();
        if (next.done) break;
        const result = next.value;
        let json: string | undefined;
        for (const member of entry.members) {
          if (member.send) member.send(json ??= JSON.stringify(result));
          else member.push(result);
        }
      }
      for (const member of [...entry.members]) member.end();
    } catch (error) {
      for (const member of [...entry.members]) member.end(error);
    } finally {
      if (this.#running.get(key) === entry) this.#running.delete(key);
    }
  }

  #join(key: string, entry: Entry, options: MemberOptions): AsyncIterableIterator<ExecutionResult> {
    const { send } = options;
    const queue: ExecutionResult[] = [];
    let wake: (() => void) | undefined;
    let ended = false;
    let failure: unknown;
    const member: Member = {
      send,
      push(result) {
        queue.push(result);
        wake?.();
      },
      end: (error) => end(error),
    };
    /** What stops the refusals (set once they are watched; a refusal may come while they start). */
    const refusals: { stop?: () => void } = {};
    const end = (error?: unknown) => {
      ended = true;
      failure = error;
      entry.members.delete(member);
      refusals.stop?.();
      wake?.();
    };
    entry.members.add(member);
    refusals.stop = options.refusals?.((refusal) => {
      if (ended) return;
      queue.push(refusal);
      void leave();
    });
    /** Leaves the execution; `drop`: the queued results are not sent either (the client left). */
    const leave = (drop = false): Promise<IteratorResult<ExecutionResult>> => {
      ended = true;
      if (drop) queue.length = 0;
      entry.members.delete(member);
      refusals.stop?.();
      wake?.();
      // The last one out stops the execution (its live stream unsubscribes).
      if (entry.members.size === 0 && this.#running.get(key) === entry) {
        this.#running.delete(key);
        void entry.source.return?.();
      }
      return Promise.resolve({ value: undefined, done: true });
    };
    return {
      async next(): Promise<IteratorResult<ExecutionResult>> {
        for (;;) {
          if (queue.length) return { value: queue.shift()!, done: false };
          if (ended) {
            if (failure !== undefined) {
              const error = failure;
              failure = undefined;
              throw error;
            }
            return { value: undefined, done: true };
          }
          await new Promise<void>((resolve) => wake = resolve);
          wake = undefined;
        }
      },
      return: () => leave(true),
      throw: (error) => leave(true).then(() => Promise.reject(error)),
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }
}
