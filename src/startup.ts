/**
 * The start of both entry points (`deno task start`, `deno task admin`): the configuration, then
 * the app. A problem the operator must fix (a bad variable, a database that cannot be reached or
 * refuses the credentials, a port in use) is printed as one line naming the variable to change and
 * exits 78 (EX_CONFIG): nothing to retry until then, and no stack trace to read.
 */
import { type Config, ConfigError, loadConfig } from "./config.ts";
import { type App, buildApp, type BuildOptions } from "./app.ts";
import { StartupError } from "./db/embedded.ts";

/** Exit code of a start the operator must fix (sysexits' EX_CONFIG). */
export const EX_CONFIG = 78;

/** Prints the one line and ends the process with EX_CONFIG. */
export function exitMisconfigured(line: string): never {
  console.error(line);
  Deno.exit(EX_CONFIG);
}

export async function startApp(options: BuildOptions & { listens?: boolean } = {}): Promise<App> {
  let config: Config;
  try {
    config = loadConfig(Deno.env.toObject());
  } catch (e) {
    if (e instanceof ConfigError) exitMisconfigured(`Invalid configuration: ${e.problems.join("; ")}`);
    throw e;
  }
  // Before anything is created (the first owner's password is printed once): a busy port now would
  // lose it.
  if (options.listens) {
    const busy = portProblem(config);
    if (busy) exitMisconfigured(busy);
  }
  try {
    return await buildApp(config, options);
  } catch (e) {
    if (e instanceof StartupError) exitMisconfigured(e.message);
    const database = databaseProblem(e, config);
    if (database) exitMisconfigured(database);
    throw e;
  }
}

/** Why the server cannot listen on HOST:PORT, or null when it can. */
export function portProblem(config: Pick<Config, "host" | "port">): string | null {
  if (config.port === 0) return null;
  try {
    Deno.listen({ hostname: config.host, port: config.port }).close();
    return null;
  } catch (e) {
    return listenProblem(e, config);
  }
}

/** The one line for an error of listening on HOST:PORT, or null when it is another error. */
export function listenProblem(e: unknown, config: Pick<Config, "host" | "port">): string | null {
  const where = `${config.host}:${config.port}`;
  if (e instanceof Deno.errors.AddrInUse) {
    return `PORT: ${where} is already in use by another process; stop it or set PORT to a free port`;
  }
  if (e instanceof Deno.errors.PermissionDenied) {
    return `PORT: this user may not listen on ${where}; set PORT to 1024 or above`;
  }
  if (e instanceof Deno.errors.AddrNotAvailable) {
    return `HOST: ${config.host} is not an address of this machine; set HOST (127.0.0.1 or 0.0.0.0)`;
  }
  return null;
}

/** Every error of a chain (`cause`, Prisma's and pg's wrappers), outermost first. */
function chain(e: unknown): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (let cur = e, depth = 0; cur && typeof cur === "object" && depth < 8; depth++) {
    out.push(cur as Record<string, unknown>);
    cur = (cur as { cause?: unknown }).cause;
  }
  return out;
}

/**
 * The one line for a database the server cannot use, naming DATABASE_URL (or, for the embedded
 * database, DATA_DIR), or null when the error is something else.
 */
export function databaseProblem(e: unknown, config: Pick<Config, "databaseUrl" | "dataDir">): string | null {
  const codes = chain(e).map((c) => String(c.code ?? ""));
  const text = chain(e).map((c) => String(c.message ?? "")).join(" ");
  const variable = config.databaseUrl ? "DATABASE_URL" : "DATA_DIR";
  let where = "the embedded database";
  if (config.databaseUrl) {
    try {
      const url = new URL(config.databaseUrl);
      where = `${url.hostname}:${url.port || 5432}`;
    } catch { /* config.ts checked its form */ }
  }
  const has = (...wanted: string[]) => codes.some((c) => wanted.includes(c));
  if (
    has(
      "ECONNREFUSED",
      "ENOTFOUND",
      "EAI_AGAIN",
      "ETIMEDOUT",
      "EHOSTUNREACH",
      "ENETUNREACH",
      "ConnectionRefused",
    )
  ) {
    return `${variable}: cannot reach the database at ${where} (${
      codes.find(Boolean)
    }); start it or fix the host and port`;
  }
  if (has("28P01", "28000")) {
    return `${variable}: the database at ${where} refused the user name or password`;
  }
  if (has("3D000")) {
    const name = /database "([^"]+)" does not exist/.exec(text)?.[1];
    return `${variable}: the database ${
      name ? `"${name}" ` : ""
    }does not exist at ${where}; create it or fix the name`;
  }
  if (/connection refused|could not connect|ECONNREFUSED/i.test(text)) {
    return `${variable}: cannot reach the database at ${where}; start it or fix the host and port`;
  }
  return null;
}
