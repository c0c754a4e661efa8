/**
 * GraphiQL at /graphql (APP_ENV=development, a browser asking for HTML), opened with the headers a
 * call needs. With the console's live session cookie: `x-workspace-id` of the workspace the console
 * acts in (the one it keeps in localStorage, when it is still one of the member's; else the first),
 * and every call carries the cookie and the CSRF header, so no token is written into the page.
 * Without one: an example of the Bearer headers to fill in. The page is render-graphiql's, scripts
 * and styles inline from the pinned npm package: it needs no network beyond this server (Yoga's
 * default loads them from a CDN).
 */
import type { Deps } from "../context.ts";
import { authenticate } from "../auth/authenticate.ts";
import { CSRF_HEADER, sessionCookieOf } from "../auth/console_cookie.ts";
import { AppError } from "../shared/errors.ts";
import { viewer } from "../workspaces/service.ts";
import { renderGraphiQLWith } from "./yoga_internals.ts";

export const EXAMPLE_HEADERS = {
  authorization: "Bearer <the token of POST /api/auth/login>",
  "x-workspace-id": "<a workspace id>",
};

/** As Yoga decides it: a GET whose Accept names text/html. */
export function asksForGraphiQL(request: Request): boolean {
  return request.method === "GET" && (request.headers.get("accept") ?? "").includes("text/html");
}

/** The workspaces of the console's session on this request, or null when it has none (or a dead one). */
async function sessionWorkspaces(deps: Deps, request: Request, authorization: string | null) {
  if (request.headers.has("authorization") || !sessionCookieOf(deps.config, request)) return null;
  try {
    const principal = await authenticate(deps, authorization);
    const { workspaces } = await viewer(deps, principal);
    return workspaces.length ? workspaces.map((w) => w.id) : null;
  } catch (e) {
    if (e instanceof AppError) return null;
    throw e;
  }
}

/**
 * Run in the page before GraphiQL starts: the console's workspace, when it is one of `ids` (the
 * session's, in the options as `switchboardWorkspaces`), goes in the opening headers.
 */
function start(root: Element, options: Record<string, unknown>) {
  const ids = options.switchboardWorkspaces as string[] | undefined;
  delete options.switchboardWorkspaces;
  try {
    // Where the console keeps the workspace it acts in (web/src/session.ts).
    const chosen = localStorage.getItem("switchboard.workspace");
    if (ids && chosen && ids.includes(chosen)) {
      const headers = JSON.parse(options.headers as string);
      headers["x-workspace-id"] = chosen;
      options.headers = JSON.stringify(headers, null, 2);
    }
  } catch {
    // No storage (blocked): the server's choice stands.
  }
  (globalThis as unknown as { YogaGraphiQL: { renderYogaGraphiQL(r: Element, o: unknown): void } })
    .YogaGraphiQL.renderYogaGraphiQL(root, options);
}

/** GraphiQL's page for `request`, whose credential (header or cookie) is `authorization`. */
export async function graphiqlPage(
  deps: Deps,
  request: Request,
  authorization: string | null,
): Promise<Response> {
  const ids = await sessionWorkspaces(deps, request, authorization);
  const headers = ids ? { "x-workspace-id": ids[0] } : EXAMPLE_HEADERS;
  const options = {
    title: "Switchboard GraphiQL",
    headers: JSON.stringify(headers, null, 2),
    // The cookie goes with every call; the CSRF header too (it only proves the call is this page's).
    credentials: "same-origin" as const,
    additionalHeaders: { [CSRF_HEADER]: "1" },
    ...(ids ? { switchboardWorkspaces: ids } : {}),
  };
  return new Response(renderGraphiQLWith(options, start.toString()), {
    headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" },
  });
}
