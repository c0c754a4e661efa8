/**
 * Login JWTs with jose: HS256 only, `exp` required, issuer and audience checked. Each carries a `jti`,
 * the id of its Session row (src/auth/sessions.ts), so it can be revoked.
 */
import { jwtVerify, SignJWT } from "jose";

const ALG = "HS256";
const ISSUER = "switchboard";
const AUDIENCE = "switchboard-api";

export interface JwtKeys {
  key: Uint8Array;
  ttlSeconds: number;
}

export function jwtKeys(secret: string, ttlSeconds: number): JwtKeys {
  return { key: new TextEncoder().encode(secret), ttlSeconds };
}

/** The claims of a verified login JWT. */
export interface UserClaims {
  userId: string;
  sessionId: string;
}

/**
 * When a JWT signed now expires. Wall-clock time, not the injected clock: jose checks `exp` against
 * the system clock, and tests that move their clock by days keep their logins.
 */
export function jwtExpiry(keys: JwtKeys): Date {
  return new Date((Math.floor(Date.now() / 1000) + keys.ttlSeconds) * 1000);
}

export function signUserJwt(keys: JwtKeys, claims: UserClaims & { expiresAt: Date }): Promise<string> {
  return new SignJWT({})
    .setJti(claims.sessionId)
    .setProtectedHeader({ alg: ALG, typ: "JWT" })
    .setSubject(claims.userId)
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    // Issued when its expiry was fixed (jwtExpiry), so the two are always the TTL apart, whatever
    // the session's storing took in between.
    .setIssuedAt(Math.floor(claims.expiresAt.getTime() / 1000) - keys.ttlSeconds)
    .setExpirationTime(Math.floor(claims.expiresAt.getTime() / 1000))
    .sign(keys.key);
}

/**
 * A claim that can name a row: a string of printable ASCII, as our ids are. A signed token is still
 * outside input (a leaked secret, another service's token): anything else must be a 401, not a
 * query PostgreSQL refuses (a NUL) or a lookup by a number.
 */
function isIdClaim(value: unknown): value is string {
  return typeof value === "string" && value.length <= 128 && /^[\x21-\x7e]+$/.test(value);
}

/**
 * The claims of a valid token, or null for anything invalid, expired, of another algorithm or
 * without a `jti` (tokens issued before sessions existed). Revocation is checked by the caller.
 */
export async function verifyUserJwt(keys: JwtKeys, token: string): Promise<UserClaims | null> {
  try {
    const { payload } = await jwtVerify(token, keys.key, {
      algorithms: [ALG],
      issuer: ISSUER,
      audience: AUDIENCE,
      requiredClaims: ["exp", "sub", "jti"],
    });
    const { sub, jti } = payload;
    return isIdClaim(sub) && isIdClaim(jti) ? { userId: sub, sessionId: jti } : null;
  } catch {
    return null;
  }
}
