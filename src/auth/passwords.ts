/** Passwords are stored as Argon2id hashes (memory-hard; @node-rs/argon2 with its defaults: 19 MiB, t=2). */
import { hash, verify } from "@node-rs/argon2";

export function hashPassword(password: string): Promise<string> {
  return hash(password);
}

export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  try {
    return await verify(stored, password);
  } catch {
    return false;
  }
}

// A real hash to verify against when the email is unknown, so timing does not reveal accounts.
let dummy: Promise<string> | undefined;
export function dummyHash(): Promise<string> {
  return dummy ??= hash("not-a-real-password");
}
