// A stand-in for Prisma's native `schema-engine` binary, which cannot be downloaded on these machines.
//
// The Prisma CLI runs it when PRISMA_SCHEMA_ENGINE_BINARY points at tools/schema-engine. It speaks the
// same protocol as the native binary:
//   ENGINE --version                                  -> one line on stdout
//   ENGINE --datasource JSON cli <subcommand>         -> one-shot: can-connect-to-database,
//                                                        create-database, drop-database
//   ENGINE --datamodels FILE... --datasource JSON     -> JSON-RPC 2.0, one object per line on stdin/stdout
// Log lines go to stderr as JSON ({timestamp, level, fields: {message}, target}).
//
// The real work is done by the WebAssembly build of the same engine (@prisma/schema-engine-wasm) with
// @prisma/adapter-pg as its database connection. That wasm API is internal to Prisma: the versions are
// pinned in deno.json (schema-engine-wasm 8.1.0-2.59be4fda..., adapter-pg and driver-adapter-utils 7.10.1)
// and must move together with the `prisma` CLI version.

import { createRequire } from "node:module";
import { readFile } from "node:fs/promises";
import { PrismaPg } from "@prisma/adapter-pg";
import { bindMigrationAwareSqlAdapterFactory } from "@prisma/driver-adapter-utils";
import * as glue from "@prisma/schema-engine-wasm/schema_engine_bg";
import type { PoolConfig } from "pg";

// deno-lint-ignore no-explicit-any
type Any = any;

// ---------------------------------------------------------------------------------------------------
// pg: use the very `pg` that @prisma/adapter-pg imports (8.23 today, not the app's pinned 8.16), so the
// bridge runs one pg: the version the adapter was built against.
const requireFromAdapter = createRequire(import.meta.resolve("@prisma/adapter-pg"));
const pg = requireFromAdapter("pg");
const { parse: parseConnectionString } = createRequire(requireFromAdapter.resolve("pg"))(
  "pg-connection-string",
);

const PG_CHAR_OID = 18; // Postgres' internal one-byte "char" type (pg_class.relkind, pg_constraint.contype, ...)
const PG_TEXT_OID = 25;
const COLUMN_TYPE_CHARACTER = 6; // ColumnTypeEnum.Character of @prisma/driver-adapter-utils
const CHAR_MARK = "\u0001char"; // appended to a "char" column's name between pg and the adapter

// adapter-pg 7.10.1 throws UnsupportedNativeDataType on any result column of type "char", and the
// engine's catalog queries return several. pg hands the value over as a one-character string, so
// the column passes the adapter as `text`, its name marked; charColumnsAsCharacter() then gives it
// back to the engine as the Character column it reads with get_char (pg_constraint.contype: on
// PostgreSQL 18 NOT NULL constraints are rows there too, so the engine reads it for every table).
function charColumnsAsText<T>(result: T): T {
  for (const r of Array.isArray(result) ? result : [result]) {
    for (const field of (r as Any)?.fields ?? []) {
      if (field.dataTypeID === PG_CHAR_OID) {
        field.dataTypeID = PG_TEXT_OID;
        field.name += CHAR_MARK;
      }
    }
  }
  return result;
}

/** The adapter's result set with the marked columns typed Character and their names restored. */
function charColumnsAsCharacter<T extends { columnNames: string[]; columnTypes: number[] }>(rs: T): T {
  rs.columnNames.forEach((name, i) => {
    if (name.endsWith(CHAR_MARK)) {
      rs.columnNames[i] = name.slice(0, -CHAR_MARK.length);
      rs.columnTypes[i] = COLUMN_TYPE_CHARACTER;
    }
  });
  return rs;
}

/** Every queryRaw of an adapter or of a transaction it starts answers char columns as Character. */
function withCharColumns(queryable: Any): Any {
  const queryRaw = queryable.queryRaw.bind(queryable);
  queryable.queryRaw = async (query: unknown) => charColumnsAsCharacter(await queryRaw(query));
  if (queryable.startTransaction) {
    const start = queryable.startTransaction.bind(queryable);
    queryable.startTransaction = async (...args: unknown[]) => withCharColumns(await start(...args));
  }
  return queryable;
}

class CharAsTextClient extends pg.Client {
  query(...args: Any[]) {
    // pg.Pool#query calls us with a callback; the adapter calls with a promise (inside transactions).
    const callback = typeof args.at(-1) === "function" ? args.pop() : undefined;
    if (callback) {
      return super.query(
        ...args,
        (err: unknown, res: unknown) => callback(err, err ? res : charColumnsAsText(res)),
      );
    }
    const ret = super.query(...args);
    return ret instanceof Promise ? ret.then(charColumnsAsText) : ret;
  }
}

type PgConfig = PoolConfig & Record<string, unknown>;

// A connection string becomes separate fields: adapter-pg builds its shadow pool as
// `{ ...config, database }`, and with a `connectionString` in the config pg lets the string win, so the
// "shadow" pool would silently point at the main database.
function pgConfigFromUrl(url: string): { config: PgConfig; schema?: string } {
  const { schema, connectionString: _drop, port, ...config } = parseConnectionString(url);
  if (schema) config.options = `${config.options ?? ""} -c search_path="${schema}"`.trim();
  return {
    config: { ...config, port: port ? Number(port) : undefined, Client: CharAsTextClient },
    schema: schema ?? undefined,
  };
}

const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;
const where = (c: PgConfig) => `${c.host ?? "localhost"}:${c.port ?? 5432}`;

// ---------------------------------------------------------------------------------------------------
// The adapter factory the wasm engine uses for the main and the shadow database.

function makeAdapterFactory(datasource: { url: string; shadowDatabaseUrl?: string }) {
  const main = pgConfigFromUrl(datasource.url);
  const shadow = datasource.shadowDatabaseUrl ? pgConfigFromUrl(datasource.shadowDatabaseUrl) : undefined;

  // adapter-pg splits scripts on every ";" (breaking functions, string literals, comments) and runs the
  // pieces one by one. The native engine sends a migration as one simple-protocol query, which Postgres
  // also runs as one implicit transaction; do the same.
  const withWholeScripts = (adapter: Any) => {
    adapter.executeScript = async function (script: string) {
      try {
        await this.client.query(script);
      } catch (error) {
        this.onError(error); // rethrows as the DriverAdapterError the engine understands
      }
    };
    return withCharColumns(adapter);
  };

  const factory = {
    provider: "postgres" as const,
    adapterName: "@prisma/adapter-pg",
    connect: async () => withWholeScripts(await new PrismaPg(main.config, { schema: main.schema }).connect()),
    connectToShadowDb: async () => {
      if (shadow) {
        // A configured shadow database is scratch space. The native engine empties it before use; the
        // wasm engine does not, so the second `migrate dev` would fail with "type ... already exists".
        const schema = quoteIdent(shadow.schema ?? "public");
        await runOnServer(shadow.config, `DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}`);
        return withWholeScripts(await new PrismaPg(shadow.config, { schema: shadow.schema }).connect());
      }
      // Same as the native engine: a throwaway database on the main server, dropped afterwards.
      const database = `prisma_migrate_shadow_db_${crypto.randomUUID()}`;
      await runOnServer(main.config, `CREATE DATABASE ${quoteIdent(database)}`);
      const adapter = withWholeScripts(await new PrismaPg({ ...main.config, database }).connect());
      // adapter-pg drops the database before closing its pool, which fails while connections are open:
      // close the pool first.
      const closePool = adapter.dispose.bind(adapter);
      adapter.dispose = async () => {
        await closePool();
        await runOnServer(main.config, `DROP DATABASE IF EXISTS ${quoteIdent(database)}`);
      };
      return adapter;
    },
  };
  return bindMigrationAwareSqlAdapterFactory(factory as Any);
}

// Runs one statement on a database of the given server; `database` defaults to the config's own.
async function runOnServer(config: PgConfig, sql: string, database = config.database) {
  const client = new pg.Client({ ...config, database });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

// ---------------------------------------------------------------------------------------------------
// Output: stdout carries JSON-RPC only; everything else is a JSON log line on stderr.

const encoder = new TextEncoder();
function writeAll(fd: typeof Deno.stdout, text: string) {
  const bytes = encoder.encode(text);
  for (let off = 0; off < bytes.length;) off += fd.writeSync(bytes.subarray(off));
}
const send = (message: unknown) => writeAll(Deno.stdout, JSON.stringify(message) + "\n");

function log(
  level: "INFO" | "WARN" | "ERROR" | "DEBUG",
  fields: Record<string, unknown>,
  target = "schema_engine",
) {
  writeAll(
    Deno.stderr,
    JSON.stringify({ timestamp: new Date().toISOString(), level, fields, target }) + "\n",
  );
}

// A user-facing error in the engine's shape (error_code is a Prisma code like P1001, when known).
type EngineError = { is_panic: boolean; message: string; error_code?: string; meta?: unknown };

function toEngineError(error: unknown): EngineError {
  const e = error as Any;
  // A panic traps with a bare "unreachable"; its real message went to the panic registry.
  if (lastPanic) {
    const message = lastPanic;
    lastPanic = undefined;
    return { is_panic: true, message, meta: { full_error: String(e?.message ?? e) } };
  }
  // The wasm engine's user-facing errors are Errors with the Prisma code (e.g. P3009) in `code`.
  const code = [e?.error_code, e?.code].find((c) => typeof c === "string" && /^P\d{4}$/.test(c));
  return { is_panic: false, message: String(e?.message ?? e), error_code: code, meta: e?.meta };
}

function safeJson(text: unknown) {
  try {
    return typeof text === "string" ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

// Prisma's codes for connection problems, so the CLI's messages and its "create the database?" logic work.
function connectionError(error: Any, config: PgConfig): EngineError {
  const at = where(config);
  if (error?.code === "3D000") {
    return {
      is_panic: false,
      error_code: "P1003",
      message: `Database \`${config.database}\` does not exist on the database server at \`${at}\`.`,
      meta: { database_name: config.database, database_host: config.host, database_port: config.port },
    };
  }
  if (error?.code === "28P01" || error?.code === "28000") {
    return {
      is_panic: false,
      error_code: "P1000",
      message: `Authentication failed against database server, the provided database credentials for ` +
        `\`${config.user}\` are not valid.\n\nPlease make sure to provide valid database credentials for ` +
        `the database server at \`${at}\`.`,
    };
  }
  if (["ECONNREFUSED", "ENOTFOUND", "EHOSTUNREACH", "ETIMEDOUT"].includes(error?.code)) {
    return {
      is_panic: false,
      error_code: "P1001",
      message:
        `Can't reach database server at \`${at}\`\n\nPlease make sure your database server is running at \`${at}\`.`,
    };
  }
  return { is_panic: false, message: String(error?.message ?? error) };
}

// ---------------------------------------------------------------------------------------------------
// Command line.

type Args = {
  datamodels: string[];
  datasource?: { url: string; shadowDatabaseUrl?: string };
  rest: string[];
};

function parseArgs(argv: string[]): Args {
  const args: Args = { datamodels: [], rest: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--datamodels") args.datamodels.push(argv[++i]);
    else if (a === "--datasource") args.datasource = JSON.parse(argv[++i]);
    else if (a === "--enabled-preview-features" || a === "--extension-types") i++; // no effect on Postgres
    else args.rest.push(a);
  }
  return args;
}

// Rust panics inside the wasm report their message here before the call traps (the glue expects this
// global; the Prisma CLI defines it for its own wasm modules). Kept so the error sent back is readable.
let lastPanic: string | undefined;
(globalThis as Any).PRISMA_WASM_PANIC_REGISTRY = {
  set_message(message: string) {
    lastPanic = `RuntimeError: ${message}`;
  },
};

async function loadEngineModule() {
  // wasm-bindgen output: the glue module is the .wasm's only import; wire them up by hand (Deno would
  // also import the .wasm directly, but this does not depend on that loader).
  const glueUrl = new URL(import.meta.resolve("@prisma/schema-engine-wasm/schema_engine_bg"));
  const bytes = await readFile(new URL("./schema_engine_bg.wasm", glueUrl));
  const { instance } = await WebAssembly.instantiate(bytes, { "./schema_engine_bg.js": glue as Any });
  glue.__wbg_set_wasm(instance.exports);
  (instance.exports.__wbindgen_start as () => void)();
  return glue;
}

// `ENGINE --datasource JSON cli <command>`: exit 0 on success; on failure an ERROR line with the
// Prisma error code (target schema_engine::logger, which the CLI looks for) and exit 1.
async function runCliCommand(command: string, datasource: Args["datasource"]): Promise<number> {
  // The CLI drops the first stderr line of a failed one-shot command, as the native engine always
  // starts with one; keep that line so the real error is not the one swallowed.
  log("INFO", { message: `Starting schema engine CLI command ${command}` });
  if (!datasource?.url) {
    log("ERROR", { is_panic: false, message: "No datasource url given" }, "schema_engine::logger");
    return 1;
  }
  const { config } = pgConfigFromUrl(datasource.url);
  try {
    if (command === "can-connect-to-database") {
      await runOnServer(config, "SELECT 1");
    } else if (command === "create-database") {
      await runOnServer(config, `CREATE DATABASE ${quoteIdent(config.database!)}`, "postgres");
    } else if (command === "drop-database") {
      await runOnServer(config, `DROP DATABASE ${quoteIdent(config.database!)}`, "postgres");
    } else {
      log("ERROR", { is_panic: false, message: `Unknown cli command: ${command}` }, "schema_engine::logger");
      return 1;
    }
    return 0;
  } catch (error) {
    log("ERROR", { ...connectionError(error, config) }, "schema_engine::logger");
    return 1;
  }
}

// JSON-RPC server: requests are handled one at a time, in order, like the native engine.
async function runRpcServer(args: Args, wasm: typeof glue): Promise<number> {
  if (!args.datasource?.url) throw new Error("--datasource with a url is required");
  const datasource = args.datasource;
  const datamodels: [string, string][] = await Promise.all(
    args.datamodels.map(async (path) => [path, await readFile(path, "utf8")] as [string, string]),
  );
  // The engine logs through this callback, already in the native engine's JSON shape; add a timestamp.
  const engineLog = (entry: unknown) => {
    const e = typeof entry === "string" ? safeJson(entry) ?? { message: entry } : entry as Any;
    if (e?.fields && e?.level) {
      writeAll(Deno.stderr, JSON.stringify({ timestamp: new Date().toISOString(), ...e }) + "\n");
    } else log("INFO", typeof e === "object" ? e : { message: String(e) });
  };
  // No --datamodels (e.g. `migrate diff`): pass undefined, as an empty list makes the engine panic.
  const engine = await wasm.SchemaEngine.new(
    { datamodels: datamodels.length ? datamodels : undefined },
    engineLog,
    makeAdapterFactory(datasource),
  );

  // Requests we send to the CLI (only `print`), waiting for its answer.
  let nextOwnId = 1_000_000;
  const pending = new Map<number, () => void>();
  const askCli = (method: string, params: unknown) =>
    new Promise<void>((resolve) => {
      const id = nextOwnId++;
      pending.set(id, resolve);
      send({ jsonrpc: "2.0", id, method, params });
    });

  const withMigrationSchemaCached = async <T>(p: Any, call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (error) {
      if (
        !String((error as Error)?.message).includes("shadow DB must be provided through an external factory")
      ) {
        throw error;
      }
      await engine.diagnoseMigrationHistory({
        migrationsList: p.migrationsList,
        optInToShadowDatabase: true,
        filters: p.filters,
      });
      return await call();
    }
  };

  const handlers: Record<string, (params: Any) => Promise<unknown>> = {
    // The wasm engine names this one `version`.
    getDatabaseVersion: (p) => engine.version(p ?? null),
    // Not part of the wasm engine: done directly, like the `cli create-database` command.
    createDatabase: async () => {
      const { config } = pgConfigFromUrl(datasource.url);
      await runOnServer(config, `CREATE DATABASE ${quoteIdent(config.database!)}`, "postgres");
      return { databaseName: config.database };
    },
    // `migrate dev` runs devDiagnostic, applyMigrations, then these two. The wasm engine can only get the
    // schema of the migration history from a shadow database inside diagnoseMigrationHistory (which
    // caches it); these two reuse that cache and otherwise fail with "PostgreSQL shadow DB must be
    // provided through an external factory". The cache misses when applyMigrations just applied
    // something, so fill it and retry.
    evaluateDataLoss: (p) => withMigrationSchemaCached(p, () => engine.evaluateDataLoss(p)),
    createMigration: (p) => withMigrationSchemaCached(p, () => engine.createMigration(p)),
    // The CLI wants diff output as a separate `print` request before the reply.
    diff: async (p) => {
      const { exitCode, stdout } = await engine.diff(p);
      if (stdout != null) await askCli("print", { content: stdout });
      return { exitCode };
    },
  };

  const handle = async (request: Any) => {
    const { id, method, params } = request;
    try {
      let result: unknown;
      if (handlers[method]) result = await handlers[method](params);
      else if (typeof (engine as Any)[method] === "function" && method !== "free") {
        result = await (engine as Any)[method](params ?? {});
      } else throw new Error(`Unknown JSON-RPC method: ${method}`);
      send({ jsonrpc: "2.0", id, result: result ?? {} });
    } catch (error) {
      const data = toEngineError(error);
      log("ERROR", { ...data }, "schema_engine::logger");
      send({
        jsonrpc: "2.0",
        id,
        error: { code: 4466, message: "An error happened. Check the data field for details.", data },
      });
    }
  };

  let queue = Promise.resolve();
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of Deno.stdin.readable) {
    buffer += decoder.decode(chunk, { stream: true });
    let nl;
    while ((nl = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, nl).trim();
      buffer = buffer.slice(nl + 1);
      if (!line) continue;
      const message = safeJson(line);
      if (!message) {
        log("WARN", { message: `Ignoring a line that is not JSON: ${line.slice(0, 200)}` });
      } else if (message.method) {
        queue = queue.then(() => handle(message));
      } else if (pending.has(message.id)) {
        // The CLI's answer to one of our requests: must not wait behind the queue it unblocks.
        pending.get(message.id)!();
        pending.delete(message.id);
      }
    }
  }
  // stdin closed: the CLI is done with us. Nobody will answer our own requests any more.
  for (const resolve of pending.values()) resolve();
  await queue;
  engine.free();
  return 0;
}

async function main(argv: string[]): Promise<number> {
  const args = parseArgs(argv);
  if (args.rest.includes("--version") || args.rest.includes("-V")) {
    const wasm = await loadEngineModule();
    console.log(`schema-engine-cli ${wasm.version()} (wasm via tools/schema-engine)`);
    return 0;
  }
  if (args.rest[0] === "cli") return await runCliCommand(args.rest[1], args.datasource);
  return await runRpcServer(args, await loadEngineModule());
}

// A panic inside the wasm can surface outside any request (in a callback the engine scheduled). Report
// it the way the native engine does (an ERROR line, exit code 101) instead of Deno's crash output.
const crash = (event: Event & { error?: unknown; reason?: unknown }) => {
  event.preventDefault();
  log("ERROR", { ...toEngineError(event.error ?? event.reason), is_panic: true }, "schema_engine::logger");
  Deno.exit(101);
};
globalThis.addEventListener("error", crash);
globalThis.addEventListener("unhandledrejection", crash);

try {
  Deno.exit(await main(Deno.args));
} catch (error) {
  log("ERROR", { ...toEngineError(error) }, "schema_engine::logger");
  Deno.exit(1);
}
