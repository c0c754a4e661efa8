/**
 * First-run set-up: the JWT secret and the secrets key kept under the data dir when JWT_SECRET or
 * SECRETS_KEY is unset (embedded mode only: config requires both with DATABASE_URL), and the
 * first owner when the database has no user (docs/behaviour.md "Running the server").
 */
import type { Deps } from "../context.ts";
import type { Config } from "../config.ts";
import { randomToken } from "../shared/crypto.ts";
import { decodeKey, generateKey, SecretBox } from "../shared/secret_box.ts";
import { createUser, createWorkspaceFor } from "../workspaces/mod.ts";

/** JWT_SECRET, or one generated once and kept in `<dataDir>/jwt-secret`. */
export async function resolveJwtSecret(config: Config): Promise<string> {
  if (config.jwtSecret) return config.jwtSecret;
  const file = `${config.dataDir}/jwt-secret`;
  try {
    const kept = (await Deno.readTextFile(file)).trim();
    if (kept.length >= 32) return kept;
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  await Deno.mkdir(config.dataDir, { recursive: true });
  const secret = randomToken(48);
  await Deno.writeTextFile(file, secret, { mode: 0o600 });
  return secret;
}

/**
 * The secret box: SECRETS_KEY (and SECRETS_KEY_PREVIOUS), or a key generated once and kept in
 * `<dataDir>/secrets-key` (0600). A kept file that is not a valid key stops the start rather than
 * being replaced: the values sealed under it would be lost.
 */
export async function resolveSecretBox(config: Config): Promise<SecretBox> {
  if (config.secretsKey) return new SecretBox(config.secretsKey, config.secretsKeyPrevious);
  const file = `${config.dataDir}/secrets-key`;
  let kept: string | undefined;
  try {
    kept = await Deno.readTextFile(file);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  if (kept === undefined) {
    await Deno.mkdir(config.dataDir, { recursive: true });
    kept = generateKey();
    // createNew: two first starts at once must not each write (and use) a different key.
    try {
      await Deno.writeTextFile(file, kept, { mode: 0o600, createNew: true });
    } catch (e) {
      if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
      kept = await Deno.readTextFile(file);
    }
  }
  const key = decodeKey(kept);
  if (!key) throw new Error(`${file} does not hold a 32-byte base64 key; restore it or set SECRETS_KEY`);
  return new SecretBox(key, config.secretsKeyPrevious);
}

/**
 * When there is no user yet: creates the first workspace and its OWNER from BOOTSTRAP_* or, when
 * unset, `owner@localhost` with a random password, shown once: printed in development; in
 * production written to `<dataDir>/bootstrap-password` (0600) and only that path is printed, so
 * the password never reaches a container's or a service manager's log.
 */
export async function bootstrapFirstOwner(deps: Deps): Promise<void> {
  if ((await deps.db.user.count()) > 0) return;
  const { email, password, workspaceName } = deps.config.bootstrap;
  const generated = !password;
  const ownerEmail = email ?? "owner@localhost";
  const ownerPassword = password ?? randomToken(12);
  let user;
  try {
    user = await createUser(deps, { email: ownerEmail, password: ownerPassword, name: "Owner" });
  } catch (error) {
    // Several processes started together on a new database: one of them created the owner.
    if ((await deps.db.user.count()) > 0) return;
    throw error;
  }
  const ws = await createWorkspaceFor(deps, user.id, workspaceName ?? "My workspace");
  deps.logger.info("created the first owner", { email: ownerEmail, workspaceId: ws.id });
  if (!generated) {
    console.log(
      `\nFirst owner created. Open ${deps.config.publicUrl} and log in as ${ownerEmail} with BOOTSTRAP_OWNER_PASSWORD.\n`,
    );
    return;
  }
  if (deps.config.appEnv === "production") {
    const file = await writePasswordFile(deps.config.dataDir, ownerPassword);
    console.log(
      `\nFirst owner created: ${ownerEmail}. Its password is in ${file} (readable by this user only); ` +
        `log in, change it, then delete the file.\n`,
    );
    return;
  }
  // Printed to stdout, outside the structured log, once: the only place the password appears.
  console.log(
    `\nFirst owner created. Open ${deps.config.publicUrl} and log in as ${ownerEmail} / ${ownerPassword}\n(this password is shown only now).\n`,
  );
}

/** Writes the generated password to `<dataDir>/bootstrap-password`, mode 0600, replacing any. */
async function writePasswordFile(dataDir: string, password: string): Promise<string> {
  await Deno.mkdir(dataDir, { recursive: true });
  const file = `${dataDir.replace(/\/+$/, "")}/bootstrap-password`;
  await Deno.remove(file).catch(() => {}); // `mode` applies only when the file is created
  await Deno.writeTextFile(file, `${password}\n`, { mode: 0o600, createNew: true });
  return file;
}
