/**
 * Receivers often authenticate calls with a token in the URL's query. Roles without
 * webhook:secrets see webhook and intent URLs with such values masked, as they see header values.
 * (User name and password in a URL are refused at registration; older rows get them masked too.)
 * Those values are stored sealed (`sealUrlSecrets`) and opened only for the call and for readers
 * allowed webhook:secrets.
 */
import { SecretBox } from "./secret_box.ts";

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

/**
 * `raw` with `fix` applied to the value of every credential-like query parameter, every other
 * character left as it is (the URL a receiver registered is the URL it gets called on).
 */
function mapSecretValues(raw: string, fix: (value: string) => string): string {
  const hash = raw.indexOf("#");
  const end = hash < 0 ? raw.length : hash;
  const q = raw.indexOf("?");
  if (q < 0 || q >= end) return raw;
  const pieces = raw.slice(q + 1, end).split("&").map((piece) => {
    const eq = piece.indexOf("=");
    if (eq < 0 || eq === piece.length - 1) return piece;
    const name = piece.slice(0, eq);
    let decoded = name;
    try {
      decoded = decodeURIComponent(name.replace(/\+/g, " "));
    } catch { /* malformed escapes: judge the raw name */ }
    return isSecretParam(decoded) ? `${name}=${fix(piece.slice(eq + 1))}` : piece;
  });
  return raw.slice(0, q + 1) + pieces.join("&") + raw.slice(end);
}

/**
 * The URL as stored: credential-like query values sealed (`?token=sb1:<kid>:...`), the rest as
 * given, so the database never holds the credential and masking works on the stored text alike.
 */
export function sealUrlSecrets(box: Pick<SecretBox, "seal">, raw: string): string {
  return mapSecretValues(raw, (v) => box.seal(v));
}

/** The stored URL with its sealed query values opened (for the call, and for webhook:secrets). */
export function openUrlSecrets(box: Pick<SecretBox, "open">, stored: string): string {
  return mapSecretValues(stored, (v) => SecretBox.isSealed(v) ? box.open(v) : v);
}

/** The stored URL with `fix` applied to each credential-like query value (sealing older rows, rotation). */
export function fixUrlSecrets(stored: string, fix: (value: string) => string): string {
  return mapSecretValues(stored, fix);
}
