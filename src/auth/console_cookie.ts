/**
 * The console's session cookie: the same login JWT (and Session row) as `Authorization: Bearer`,
 * kept where no page script can read it. httpOnly, SameSite=Strict, Path=/, and on HTTPS Secure
 * with the `__Host-` prefix (no subdomain can set or shadow it; the prefix needs Path=/).
 *
 * A request authenticated by the cookie must come from this origin:
 * - `Sec-Fetch-Site`, when sent, is `same-origin` (or `none`, a navigation the person typed);
 * - `Origin`, when sent, is this server's (its PUBLIC_URL, or the host the request was sent to);
 *   a WebSocket upgrade, which browsers always send it with, must carry it;
 * - anything but GET and HEAD (every write, and every POST /graphql) carries `x-switchboard-csrf`:
 *   a cross-site form cannot send a header, and a cross-origin script cannot either without a CORS
 *   preflight, which the CORS policy never grants for it (src/rest/cors.ts).
 * Otherwise 403 CSRF_REFUSED, before anything runs. `Authorization` always wins over the cookie, so
 * Bearer clients (API tokens, scripts) never meet these checks.
 */
import { parse, serialize } from "hono/utils/cookie";
import { decodeJwt } from "jose";
import { AppError } from "../shared/errors.ts";

/** The header the console sends with every request the cookie authenticates (any non-empty value). */
export const CSRF_HEADER = "x-switchboard-csrf";
const PLAIN_NAME = "switchboard_session";
const SECURE_NAME = "__Host-switchboard_session";

export const csrfRefused = (why: string) => new AppError("CSRF_REFUSED", 403, why);

/** What the cookie needs of the configuration. */
export interface CookieConfig {
  /** PUBLIC_URL: the origin browsers use; `https:` makes the cookie Secure. */
  publicUrl: string;
}

/** Secure when browsers reach the server over HTTPS: PUBLIC_URL says so, or the request came that way. */
function isSecure(config: CookieConfig, request: Request): boolean {
  return config.publicUrl.startsWith("https:") || new URL(request.url).protocol === "https:";
}

const cookieName = (config: CookieConfig, request: Request) =>
  isSecure(config, request) ? SECURE_NAME : PLAIN_NAME;

/** The Set-Cookie value holding `token` until the token's own expiry. */
export function sessionCookie(config: CookieConfig, request: Request, token: string): string {
  const exp = decodeJwt(token).exp ?? 0;
  const maxAge = Math.max(0, exp - Math.floor(Date.now() / 1000));
  const secure = isSecure(config, request);
  const attributes = { httpOnly: true, sameSite: "Strict", path: "/", maxAge } as const;
  return secure
    ? serialize(SECURE_NAME, token, { ...attributes, secure: true })
    : serialize(PLAIN_NAME, token, attributes);
}

/** The Set-Cookie value that removes the cookie. */
export function clearedSessionCookie(config: CookieConfig, request: Request): string {
  const secure = isSecure(config, request);
  const attributes = { httpOnly: true, sameSite: "Strict", path: "/", maxAge: 0 } as const;
  return secure
    ? serialize(SECURE_NAME, "", { ...attributes, secure: true })
    : serialize(PLAIN_NAME, "", attributes);
}

/** The cookie's token, unchecked; null when the request has none. */
export function sessionCookieOf(config: CookieConfig, request: Request): string | null {
  const header = request.headers.get("cookie");
  if (!header) return null;
  const value = parse(header, cookieName(config, request))[cookieName(config, request)];
  return value ? value : null;
}

/** 403 CSRF_REFUSED unless the request comes from this origin, as the module's comment says. */
export function requireSameOrigin(
  config: CookieConfig,
  request: Request,
  { upgrade = false }: { upgrade?: boolean } = {},
): void {
  const site = request.headers.get("sec-fetch-site");
  if (site !== null && site !== "same-origin" && site !== "none") {
    throw csrfRefused(`The console's session is not accepted from another site (Sec-Fetch-Site: ${site}).`);
  }
  const origin = request.headers.get("origin");
  if (origin === null) {
    if (upgrade) throw csrfRefused("A WebSocket signed in by the console's session must send Origin.");
  } else if (!isOwnOrigin(config, request, origin)) {
    throw csrfRefused("The console's session is not accepted from another origin.");
  }
  const method = request.method.toUpperCase();
  if (!upgrade && method !== "GET" && method !== "HEAD" && !request.headers.get(CSRF_HEADER)?.trim()) {
    throw csrfRefused(`A request signed in by the console's session must send the ${CSRF_HEADER} header.`);
  }
}

function isOwnOrigin(config: CookieConfig, request: Request, origin: string): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false; // "null" (a sandboxed or opaque origin) and anything unparsable
  }
  if (url.origin === new URL(config.publicUrl).origin) return true;
  // The host the request was sent to (Deno.serve builds request.url from Host): a scheme may differ
  // behind a proxy that terminates TLS.
  return (url.protocol === "http:" || url.protocol === "https:") && url.host === new URL(request.url).host;
}

/**
 * The request's credential as an `Authorization` value: the header when sent, otherwise the
 * console's cookie once the request passed requireSameOrigin (403 CSRF_REFUSED when it does not),
 * otherwise null.
 */
export function requestAuthorization(
  config: CookieConfig,
  request: Request,
  options: { upgrade?: boolean } = {},
): string | null {
  const header = request.headers.get("authorization");
  if (header !== null) return header;
  const token = sessionCookieOf(config, request);
  if (token === null) return null;
  requireSameOrigin(config, request, options);
  return `Bearer ${token}`;
}
