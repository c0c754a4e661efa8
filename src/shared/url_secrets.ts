/**
 * Receivers often authenticate calls with a token in the URL's query. Roles without
 * webhook:secrets see webhook and intent URLs with such values masked, as they see header values.
 * (User name and password in a URL are refused at registration; older rows get them masked too.)
 */
export const MASK = "********";

/** Parts of a parameter name that mark its value as a credential (`api_key`, `X-Auth-Token`, `sig`). */
const SECRET_PARTS = new Set([
  "token",
  "secret",
  "password",
  "passwd",
  "pwd",
  "pass",
  "key",
  "apikey",
  "signature",
  "sig",
  "auth",
  "credential",
  "credentials",
  "jwt",
  "session",
]);

/** True for a query parameter name that looks like it carries a credential. */
export function isSecretParam(name: string): boolean {
  const lower = name.toLowerCase();
  if (/token|secret|passw|apikey|signature/.test(lower)) return true;
  return lower.split(/[^a-z0-9]+/).some((part) => SECRET_PARTS.has(part));
}

/** The URL with credential-like query values and any user name or password replaced by MASK. */
export function maskUrlSecrets(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return raw;
  }
  let changed = false;
  if (url.username || url.password) {
    url.username = url.username && MASK;
    url.password = url.password && MASK;
    changed = true;
  }
  if (url.search.length > 1) {
    // Piece by piece, so parameters that are not masked keep their exact spelling.
    const pieces = url.search.slice(1).split("&").map((piece) => {
      const eq = piece.indexOf("=");
      const name = eq < 0 ? piece : piece.slice(0, eq);
      let decoded = name;
      try {
        decoded = decodeURIComponent(name.replace(/\+/g, " "));
      } catch { /* malformed escapes: judge the raw name */ }
      if (eq < 0 || !isSecretParam(decoded)) return piece;
      changed = true;
      return `${name}=${MASK}`;
    });
    url.search = `?${pieces.join("&")}`;
  }
  return changed ? url.href : raw;
}
