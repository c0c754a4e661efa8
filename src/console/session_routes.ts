/**
 * The console's sign-in and sign-out: `POST /console/session` opens a login session (email and
 * password, as `POST /api/auth/login`) and hands its JWT to the browser in the httpOnly session
 * cookie (src/auth/console_cookie.ts) rather than to the page; `DELETE /console/session` revokes the
 * cookie's session and clears the cookie. Both refuse other origins and want the CSRF header, as
 * every write the cookie signs (no other site can sign a browser in or out).
 */
import { Hono } from "hono";
import type { Deps } from "../context.ts";
import { authenticate } from "../auth/authenticate.ts";
import {
  clearedSessionCookie,
  requireSameOrigin,
  sessionCookie,
  sessionCookieOf,
} from "../auth/console_cookie.ts";
import { verifyUserJwt } from "../auth/jwt.ts";
import { revokeSession } from "../auth/sessions.ts";
import { countAddressAttempt } from "../auth/rate_limit.ts";
import { forbidden } from "../shared/errors.ts";
import { parseInput } from "../shared/validation.ts";
import { readJson } from "../rest/http.ts";
import { loginSchema } from "../workspaces/schemas.ts";
import { login, viewer } from "../workspaces/service.ts";

export function consoleSessionRoutes(deps: Deps): Hono {
  const r = new Hono();

  /**
   * Email and password: `{ user, workspaces }` and the cookie. Or, without a body, the login JWT of
   * `Authorization: Bearer` (an accepted invitation's) moves into the cookie: the same session.
   */
  r.post("/console/session", async (c) => {
    requireSameOrigin(deps.config, c.req.raw);
    let token: string;
    let answer: { user: unknown; workspaces: unknown };
    const bearer = c.req.header("authorization");
    if (bearer !== undefined) {
      const principal = await authenticate(deps, bearer);
      if (principal.kind !== "user") throw forbidden("Only a login session can sign the console in.");
      token = bearer.trim().replace(/^Bearer\s+/i, "");
      answer = await viewer(deps, principal);
    } else {
      await countAddressAttempt(
        deps,
        (c.env as { clientAddress?: string | null } | undefined)?.clientAddress,
      );
      const session = await login(deps, parseInput(loginSchema, await readJson(c)));
      token = session.token;
      answer = { user: session.user, workspaces: session.workspaces };
    }
    return c.json(answer, 200, {
      "set-cookie": sessionCookie(deps.config, c.req.raw, token),
      "cache-control": "no-store",
    });
  });

  /** Revokes the cookie's session (when it names a live one) and clears the cookie: 204. */
  r.delete("/console/session", async (c) => {
    requireSameOrigin(deps.config, c.req.raw);
    const token = sessionCookieOf(deps.config, c.req.raw);
    const claims = token === null ? null : await verifyUserJwt(deps.jwt, token);
    if (claims) await revokeSession(deps, claims.sessionId);
    return c.body(null, 204, { "set-cookie": clearedSessionCookie(deps.config, c.req.raw) });
  });

  return r;
}
