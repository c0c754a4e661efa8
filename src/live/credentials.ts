/**
 * The credentials of this process's live subscribers and sockets, checked again before each live
 * event is handed out (src/live/hub.ts): one statement per event and workspace for every login
 * session it holds (and one for API tokens), instead of one check per subscriber. A JWT's
 * signature is verified once, when its holder connects or subscribes; its expiry, its session's
 * revocation, its user's membership and role are read again for each event. A refusal is final.
 */
import type { Principal, Role } from "../auth/actor.ts";
import type { Actor } from "../auth/actor.ts";
import { actorFor, type CredentialDeps, readCredential, sessionEnded } from "../auth/authenticate.ts";
import { AppError, forbidden, unauthorized } from "../shared/errors.ts";
import type { Logger } from "../shared/logger.ts";

/** The app's dependencies `D` with the actor of a credential: an ActorContext for src/context.ts's Deps. */
export type WithActor<D> = D & { actor: Actor };

/** Where a credential stands as of the latest event of its workspace; `C`: the context it acts with. */
export type Standing<C> = { ctx: C; refused?: undefined } | { ctx?: undefined; refused: AppError };

export interface CredentialHandle<C> {
  readonly standing: Standing<C>;
  /** Stops tracking (the socket closed, the subscription ended); once per handle. */
  release(): void;
}

interface Entry<C> {
  principal: Principal;
  standing: Standing<C>;
  refs: number;
}

/**
 * The tracked credentials of one process. `D`: the app's dependencies, handed back with each
 * credential's actor. A type parameter (src/context.ts's Deps in the app): Deps holds the hub that
 * holds these, so naming it here would make the two modules import each other.
 */
export class LiveCredentials<D extends CredentialDeps> {
  /** Workspace id → authorization header value → entry. */
  readonly #byWorkspace = new Map<string, Map<string, Entry<WithActor<D>>>>();
  /** A check under way per workspace; `again` when an event arrived while it ran. */
  readonly #checking = new Map<string, { again: boolean; done: Promise<void> }>();
  #deps: D | undefined;

  constructor(private readonly logger: Logger) {}

  /**
   * Tracks `authorization` acting in `workspaceId`: verified now (401/403 as AppError, like HTTP),
   * then kept current by `refresh`. `actor`: the caller already resolved it just now.
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
    if (!entry || entry.standing.refused) entries.set(key, entry = { principal, standing: { ctx }, refs: 0 });
    entry.refs++;
    const tracked = entry;
    let released = false;
    return {
      get standing() {
        return tracked.standing;
      },
      release: () => {
        if (released) return;
        released = true;
        if (--tracked.refs > 0 || entries.get(key) !== tracked) return;
        entries.delete(key);
        if (entries.size === 0 && this.#byWorkspace.get(workspaceId) === entries) {
          this.#byWorkspace.delete(workspaceId);
        }
      },
    };
  }

  /** Credentials tracked (tests). */
  get size(): number {
    let n = 0;
    for (const entries of this.#byWorkspace.values()) n += entries.size;
    return n;
  }

  /**
   * Reads the standing of every credential of the workspace again; resolves once a check that
   * started after this call has finished (a check already under way may have read too early).
   */
  refresh(workspaceId: string): Promise<void> {
    if (!this.#byWorkspace.has(workspaceId)) return Promise.resolve();
    const under = this.#checking.get(workspaceId);
    if (under) {
      under.again = true;
      return under.done;
    }
    const state = { again: true, done: Promise.resolve() };
    this.#checking.set(workspaceId, state);
    state.done = (async () => {
      try {
        while (state.again) {
          state.again = false;
          await this.#check(workspaceId);
        }
      } finally {
        this.#checking.delete(workspaceId);
      }
    })();
    return state.done;
  }

  async #check(workspaceId: string): Promise<void> {
    const entries = this.#byWorkspace.get(workspaceId);
    const db = this.#deps?.db;
    if (!entries || !db) return;
    // One pass: the entries of each session and token, and the sessions as the statement takes them.
    const sessions = new Map<string, Entry<WithActor<D>>[]>();
    const tokens = new Map<string, Entry<WithActor<D>>[]>();
    const asked: Array<{ id: string; userId: string; role: Role }> = [];
    for (const entry of entries.values()) {
      if (entry.standing.refused) continue;
      const p = entry.principal;
      const byId = p.kind === "user" ? sessions : tokens;
      const id = p.kind === "user" ? p.sessionId : p.tokenId;
      const list = byId.get(id);
      if (list) list.push(entry);
      else {
        byId.set(id, [entry]);
        if (p.kind === "user") asked.push({ id, userId: p.userId, role: entry.standing.ctx.actor.role });
      }
    }
    try {
      // The JWT's `exp` is its session's expiresAt (auth/sessions.ts), on the wall clock as jose checks it.
      const now = new Date();
      // Only the sessions whose standing changed come back (ended, no longer a member, another role).
      // One JSON parameter: thousands of sessions cost one string, not three escaped arrays.
      const [changed, tokenRows] = await Promise.all([
        asked.length
          ? db.$queryRaw<Array<{ id: string; ended: boolean; role: Role | null }>>`
            SELECT x."id", (s."id" IS NULL OR s."expiresAt" <= ${now}) AS "ended", m."role"::text AS "role"
            FROM json_to_recordset(${JSON.stringify(asked)}::json) AS x("id" text, "userId" text, "role" text)
            LEFT JOIN "Session" s ON s."id" = x."id" AND s."userId" = x."userId" AND s."revokedAt" IS NULL
            LEFT JOIN "Membership" m ON m."userId" = x."userId" AND m."workspaceId" = ${workspaceId}
            WHERE s."id" IS NULL OR s."expiresAt" <= ${now} OR m."role" IS NULL OR m."role"::text <> x."role"`
          : [],
        tokens.size
          ? db.$queryRaw<Array<{ id: string }>>`
            SELECT "id" FROM "ApiToken" WHERE "id" = ANY(${[
            ...tokens.keys(),
          ]}::text[]) AND "revokedAt" IS NULL`
          : [],
      ]);
      for (const row of changed) {
        for (const entry of sessions.get(row.id)!) {
          if (row.ended) entry.standing = { refused: sessionEnded() };
          else if (!row.role) {
            entry.standing = { refused: forbidden("You are not a member of this workspace.") };
          } else {
            const ctx = entry.standing.ctx!;
            entry.standing = { ctx: { ...ctx, actor: { ...ctx.actor, role: row.role } } };
          }
        }
      }
      const kept = new Set(tokenRows.map((row) => row.id));
      for (const [id, list] of tokens) {
        if (kept.has(id)) continue;
        for (const entry of list) {
          entry.standing = { refused: unauthorized("The API token is invalid or revoked.") };
        }
      }
    } catch (error) {
      // Standings stay as they were: the rows an event names cannot be read either right now.
      if (!(error instanceof AppError)) {
        this.logger.warn("live credentials not checked", { error: String(error) });
      }
    }
  }
}
