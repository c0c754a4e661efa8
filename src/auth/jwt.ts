/** Login JWTs with jose: HS256 only, `exp` required, issuer and audience checked. */
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

export function signUserJwt(keys: JwtKeys, userId: string): Promise<string> {
  return new SignJWT({})
    .setProtectedHeader({ alg: ALG, typ: "JWT" })
    .setSubject(userId)
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(`${keys.ttlSeconds}s`)
    .sign(keys.key);
}

/** The user id of a valid token, or null for anything invalid, expired or of another algorithm. */
export async function verifyUserJwt(keys: JwtKeys, token: string): Promise<string | null> {
  try {
    const { payload } = await jwtVerify(token, keys.key, {
      algorithms: [ALG],
      issuer: ISSUER,
      audience: AUDIENCE,
      requiredClaims: ["exp", "sub"],
    });
    return payload.sub ?? null;
  } catch {
    return null;
  }
}
