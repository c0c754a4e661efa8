/**
 * The credentials of this process's live subscribers and sockets, kept current by what changes them
 * instead of being read again for each event. PostgreSQL announces every change to a session, a
 * membership or an API token on CREDENTIALS_CHANNEL, in the transaction that makes it (triggers of
 * the migration `live_credential_changes`), so the hub's LISTEN connection gets it in commit order
 * with the live events; the hub hands out no later event before the credentials it names have been
 * read again (src/live/hub.ts). An event committed after a logout, a removed membership, a changed
 * role or a revoked token never reaches that credential, and no statement runs per event. Besides:
 * - a session's expiry is a timer at its `expiresAt`, and is compared again before each event;
 * - a credential is read once more just after it is tracked (a change committed between its first
 *   read and its tracking was announced before this process listened for it), and the hub's next
 *   event waits for that read;
 * - when the LISTEN connection was lost, every credential is read again (changes went unheard).
 * A JWT's signature is verified once, when its holder connects or subscribes. A refusal is final. A
 * new standing is pushed to the handle's watchers: a shared execution's member ends at once
 * (src/graphql/ws.ts), without waiting for an event.
 */
import type { Principal, Role } from "../auth/actor.ts";
import type { Actor } from "../auth/actor.ts";
import { actorFor, type CredentialDeps, readCredential, sessionEnded } from "../auth/authenticate.ts";
import { type AppError, forbidden, unauthorized } from "../shared/errors.ts";
import type { Logger } from "../shared/logger.ts";
import { detachedFromRequest } from "../shared/request_scope.ts";

/** The NOTIFY channel of credential changes (payloads: `session:<id>`, `member:<ws>:<user>`, `token:<id>`). */
export const CREDENTIALS_CHANNEL = "switchboard_live_credentials";

/** The app's dependencies `D` with the actor of a credential: an ActorContext for src/context.ts's Deps. */
export type WithActor<D> = D & { actor: Actor };

/** Where a credential stands now; `C`: the context it acts with. */
export type Standing<C> = { ctx: C; refused?: undefined } | { ctx?: undefined; refused: AppError };

export interface CredentialHandle<C> {
  readonly standing: Standing<C>;
  /** Calls `listener` with each new standing (a refusal, another role) until the returned function is called. */
  watch(listener: (standing: Standing<C>) => void): () => void;
  /** Stops tracking (the socket closed, the subscription ended); once per handle. */
  release(): void;
}

interface Entry<C> {
  workspaceId: string;
  principal: Principal;
  standing: Standing<C>;
  refs: number;
  /** The names a change notification gives this credential (see CREDENTIALS_CHANNEL). */
  names: string[];
  /** When its session ends (epoch ms), once read. */
  expiresAt?: number;
  watchers: Set<(standing: Standing<C>) => void>;
}

/** Failed reads are tried again after this long, doubling up to the maximum. */
const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 5_000;
/** setTimeout's longest delay; a later expiry is timed in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The tracked credentials of one process. `D`: the app's dependencies, handed back with each
 * credential's actor. A type parameter (src/context.ts's Deps in the app): Deps holds the hub that
 * holds these, so naming it here would make the two modules import each other.
 */
export class LiveCredentials<D extends CredentialDeps> {
  /** Workspace id → authorization header value → entry. */
  readonly #byWorkspace = new Map<string, Map<string, Entry<WithActor<D>>>>();
  /** A change notification's payload → the entries it concerns. */
  readonly #byName = new Map<string, Set<Entry<WithActor<D>>>>();
  /** Entries to read again (new, or named by a change). */
  readonly #due = new Set<Entry<WithActor<D>>>();
  /** The reads under way, until nothing is due. */
  #reading: Promise<void> | undefined;
  /** The earliest session expiry of the entries, and its timer. */
  #nextExpiry = Infinity;
  #expiryTimer: ReturnType<typeof setTimeout> | undefined;
  #deps: D | undefined;
  #stopped = false;

  constructor(private readonly logger: Logger) {}

  /**
   * Tracks `authorization` acting in `workspaceId`: verified now (401/403 as AppError, like HTTP),
   * then kept current. `actor`: the caller already resolved it just now.
   */
  async track(
    deps: D,
    authorization: string | null,
    workspaceId: string,
    actor?: Actor,
  ): Promise<CredentialHandle<WithActor<D>>> {
    this.#deps = deps;
    const principal = await readCredential(deps, authorization);
    const ctx: WithActor<D> = { ...deps, actor: actor ?? await actorFor(deps, principal, workspaceId) };
    let entries = this.#byWorkspace.get(workspaceId);
    if (!entries) this.#byWorkspace.set(workspaceId, entries = new Map());
    const key = authorization!;
    let entry = entries.get(key);
    if (!entry || entry.standing.refused) {
      if (entry) this.#forget(entry);
      const names = principal.kind === "user"
        ? [`session:${principal.sessionId}`, `member:${workspaceId}:${principal.userId}`]
        : [`token:${principal.tokenId}`];
      entries.set(
        key,
        entry = { workspaceId, principal, standing: { ctx }, refs: 0, names, watchers: new Set() },
      );
      for (const name of names) {
        let set = this.#byName.get(name);
        if (!set) this.#byName.set(name, set = new Set());
        set.add(entry);
      }
      // Read once more now that a change to it would be heard.
      this.#due.add(entry);
      this.#read();
    }
    entry.refs++;
    const tracked = entry;
    let released = false;
    return {
      get standing() {
        return tracked.standing;
      },
      watch(listener) {
        tracked.watchers.add(listener);
        return () => tracked.watchers.delete(listener);
      },
      release: () => {
        if (released) return;
        released = true;
        if (--tracked.refs > 0 || entries.get(key) !== tracked) return;
        entries.delete(key);
        if (entries.size === 0 && this.#byWorkspace.get(workspaceId) === entries) {
          this.#byWorkspace.delete(workspaceId);
        }
        this.#forget(tracked);
      },
    };
  }

  #forget(entry: Entry<WithActor<D>>) {
    this.#due.delete(entry);
    for (const name of entry.names) {
      const set = this.#byName.get(name);
      set?.delete(entry);
      if (set?.size === 0) this.#byName.delete(name);
    }
    if (this.#byName.size === 0) this.#timeExpiry(Infinity);
  }

  /** Credentials tracked (tests). */
  get size(): number {
    let n = 0;
    for (const entries of this.#byWorkspace.values()) n += entries.size;
    return n;
  }

  /** A change notification: the credentials it names are read again (none here: nothing to do). */
  changed(payload: string): void {
    const entries = this.#byName.get(payload);
    if (!entries) return;
    for (const entry of entries) this.#due.add(entry);
    this.#read();
  }

  /** Changes may have gone unheard (the LISTEN connection was lost): every credential is read again. */
  readAll(): void {
    for (const entries of this.#byWorkspace.values()) {
      for (const entry of entries.values()) this.#due.add(entry);
    }
    this.#read();
  }

  /**
   * Before an event is handed out: refuses the sessions that have expired, and gives the reads
   * still under way (undefined when none is), which the event must wait for.
   */
  ready(): Promise<void> | undefined {
    if (Date.now() >= this.#nextExpiry) this.#expire();
    return this.#reading;
  }

  /** No more reads or timers (the hub stops). */
  stop(): void {
    this.#stopped = true;
    this.#due.clear();
    this.#timeExpiry(Infinity);
  }

  #read(): void {
    if (this.#reading || !this.#due.size || this.#stopped) return;
    // Outside any request: a read a request started is not that request's.
    this.#reading = detachedFromRequest(async () => {
      let wait = RETRY_MIN_MS;
      try {
        while (this.#due.size && !this.#stopped) {
          const batch = [...this.#due].filter((entry) => !entry.standing.refused);
          this.#due.clear();
          try {
            await this.#check(batch);
            wait = RETRY_MIN_MS;
          } catch (error) {
            // Still due, and events wait meanwhile: the rows they name cannot be read either now.
            this.logger.warn("live credentials not checked", { error: String(error) });
            for (const entry of batch) if (entry.refs > 0) this.#due.add(entry);
            await new Promise((resolve) => setTimeout(resolve, wait));
            wait = Math.min(wait * 2, RETRY_MAX_MS);
          }
        }
      } finally {
        this.#reading = undefined;
      }
    });
  }

  /** Reads the standing of `entries` in one statement per kind (sessions, API tokens). */
  async #check(entries: Entry<WithActor<D>>[]): Promise<void> {
    const db = this.#deps?.db;
    if (!entries.length || !db) return;
    const sessions = entries.filter((entry) => entry.principal.kind === "user");
    const tokens = entries.filter((entry) => entry.principal.kind === "token");
    // The JWT's `exp` is its session's expiresAt (auth/sessions.ts), on the wall clock as jose checks it.
    const now = new Date();
    // One JSON parameter: thousands of sessions cost one string, not escaped arrays.
    const asked = sessions.map((entry, i) => {
      const p = entry.principal as Extract<Principal, { kind: "user" }>;
      return { i, id: p.sessionId, userId: p.userId, workspaceId: entry.workspaceId };
    });
    const [sessionRows, tokenRows] = await Promise.all([
      asked.length
        ? db.$queryRaw<Array<{ i: number; ended: boolean; role: Role | null; expiresAt: Date | null }>>`
          SELECT x."i", (s."id" IS NULL OR s."expiresAt" <= ${now}) AS "ended", m."role"::text AS "role",
                 s."expiresAt"
          FROM json_to_recordset(${JSON.stringify(asked)}::json)
            AS x("i" int, "id" text, "userId" text, "workspaceId" text)
          LEFT JOIN "Session" s ON s."id" = x."id" AND s."userId" = x."userId" AND s."revokedAt" IS NULL
          LEFT JOIN "Membership" m ON m."userId" = x."userId" AND m."workspaceId" = x."workspaceId"`
        : [],
      tokens.length
        ? db.$queryRaw<Array<{ id: string }>>`
          SELECT "id" FROM "ApiToken" WHERE "id" = ANY(${
          tokens.map((entry) => (entry.principal as Extract<Principal, { kind: "token" }>).tokenId)
        }::text[]) AND "revokedAt" IS NULL`
        : [],
    ]);
    let earliest = Infinity;
    for (const row of sessionRows) {
      const entry = sessions[row.i];
      const ctx = entry.standing.ctx;
      if (!ctx) continue; // refused meanwhile (expired)
      if (row.ended) this.#set(entry, { refused: sessionEnded() });
      else if (!row.role) this.#set(entry, { refused: forbidden("You are not a member of this workspace.") });
      else {
        entry.expiresAt = row.expiresAt!.getTime();
        earliest = Math.min(earliest, entry.expiresAt);
        if (row.role !== ctx.actor.role) {
          this.#set(entry, { ctx: { ...ctx, actor: { ...ctx.actor, role: row.role } } });
        }
      }
    }
    if (earliest < this.#nextExpiry) this.#timeExpiry(earliest);
    const kept = new Set(tokenRows.map((row) => row.id));
    for (const entry of tokens) {
      if (entry.standing.refused) continue;
      const { tokenId } = entry.principal as Extract<Principal, { kind: "token" }>;
      if (!kept.has(tokenId)) {
        this.#set(entry, { refused: unauthorized("The API token is invalid or revoked.") });
      }
    }
  }

  #set(entry: Entry<WithActor<D>>, standing: Standing<WithActor<D>>) {
    entry.standing = standing;
    for (const listener of [...entry.watchers]) listener(standing);
  }

  /** Refuses every session whose expiry has come, and times the next one. */
  #expire() {
    const now = Date.now();
    let next = Infinity;
    for (const entries of this.#byWorkspace.values()) {
      for (const entry of entries.values()) {
        if (entry.expiresAt === undefined || entry.standing.refused) continue;
        if (entry.expiresAt <= now) this.#set(entry, { refused: sessionEnded() });
        else next = Math.min(next, entry.expiresAt);
      }
    }
    this.#timeExpiry(next);
  }

  #timeExpiry(at: number) {
    clearTimeout(this.#expiryTimer);
    this.#expiryTimer = undefined;
    this.#nextExpiry = at;
    if (at === Infinity || this.#stopped) return;
    const timer = detachedFromRequest(() =>
      setTimeout(() => {
        this.#expiryTimer = undefined;
        if (Date.now() >= this.#nextExpiry) this.#expire();
        else this.#timeExpiry(this.#nextExpiry);
      }, Math.min(Math.max(0, at - Date.now()), MAX_TIMER_MS))
    );
    Deno.unrefTimer(timer);
    this.#expiryTimer = timer;
  }
}
