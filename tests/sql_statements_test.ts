/**
 * Every statement declared in a SQL module of src/ (src/db/statement.ts; the modules are the files
 * named sql.ts or *_sql.ts) is parsed and described by the migrated database (Parse + Describe, as
 * the driver does before running it), for each shape of its text: its result columns must be the
 * declared ones, in order, with the declared PostgreSQL types; a column that is a plain column of a
 * table must be declared as schema.prisma declares that field (type, and nullable when optional);
 * its parameters must be exactly the values Prisma sends. A command must return no rows.
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { Prisma } from "../src/generated/prisma/client.ts";
import { col, type Columns, command, isStatement, query, type Statement } from "../src/db/statement.ts";
import { createTestDatabase } from "./_helpers/db.ts";
import { webhookListener } from "../src/webhooks/listener.ts";
import { replyWindowListener } from "../src/conversations/pipeline/window.ts";
import { LiveHub } from "../src/live/hub.ts";
import { publishBatch } from "../src/shared/events_sql.ts";
import type { PublishedEvent } from "../src/shared/events.ts";
import { Jobs } from "../src/jobs/boss.ts";
import { webhookDeliveryQueue } from "../src/jobs/workers/webhook_delivery.ts";
import { webhookDeadLetterQueue } from "../src/jobs/workers/webhook_dead_letter.ts";
import { silentLogger } from "../src/shared/logger.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** The result and parameters of a statement text as the server describes them (nothing runs). */
interface Described {
  fields: Array<{ name: string; dataTypeID: number; tableID: number; columnID: number }> | null;
  params: number[];
}

/** pg's Submittable for Parse + Describe + Sync of an unnamed statement. */
function describe(client: pg.Client, text: string): Promise<Described> {
  return new Promise((resolve, reject) => {
    let fields: Described["fields"] = null;
    let params: number[] = [];
    let error: Error | null = null;
    const submittable = {
      submit(connection: {
        once(event: string, f: (msg: { dataTypeIDs: number[] }) => void): void;
        parse(q: { text: string; name: string; types: number[] }): void;
        describe(q: { type: string; name: string }): void;
        sync(): void;
      }) {
        connection.once("parameterDescription", (msg) => params = msg.dataTypeIDs);
        connection.parse({ text, name: "", types: [] });
        connection.describe({ type: "S", name: "" });
        connection.sync();
      },
      handleRowDescription(msg: { fields: Described["fields"] }) {
        fields = msg.fields;
      },
      handleError(e: Error) {
        error = e;
      },
      handleReadyForQuery() {
        if (error) reject(error);
        else resolve({ fields, params });
      },
    };
    client.query(submittable as unknown as pg.Submittable);
  });
}

/** schema.prisma's scalar fields, by model and field, as the PostgreSQL type they migrate to. */
function prismaColumns(): Map<string, { type: string; optional: boolean }> {
  const schema = Deno.readTextFileSync(join(ROOT, "prisma/schema.prisma"));
  const enums = new Set([...schema.matchAll(/^enum (\w+) \{/gm)].map((m) => m[1]));
  const models = new Set([...schema.matchAll(/^model (\w+) \{/gm)].map((m) => m[1]));
  const scalar: Record<string, string> = {
    String: "text",
    Int: "integer",
    BigInt: "bigint",
    Boolean: "boolean",
    Float: "double precision",
    Json: "jsonb",
    Bytes: "bytea",
    Decimal: "numeric",
  };
  const out = new Map<string, { type: string; optional: boolean }>();
  for (const block of schema.matchAll(/^model (\w+) \{([\s\S]*?)^\}/gm)) {
    for (const line of block[2].split("\n")) {
      const m = line.match(/^\s+(\w+)\s+(\w+)(\[\])?(\?)?(.*)$/);
      if (!m || models.has(m[2])) continue;
      const [, field, type, list, optional, rest] = m;
      assert.ok(!/@map\(|@@map\(/.test(rest), "schema.prisma @map is not handled here");
      let pgType = enums.has(type) ? `"${type}"` : scalar[type];
      if (type === "DateTime") {
        pgType = rest.includes("@db.Timestamptz")
          ? "timestamp with time zone"
          : rest.includes("@db.Date")
          ? "date"
          : "timestamp without time zone";
      }
      assert.ok(pgType, `schema.prisma ${block[1]}.${field}: type ${type} not mapped here`);
      out.set(`${block[1]}.${field}`, { type: list ? `${pgType}[]` : pgType, optional: !!optional });
    }
  }
  return out;
}

const PRISMA_COLUMNS = prismaColumns();

/** What is wrong with a statement's declaration, for one text (empty: nothing). */
async function check(client: pg.Client, statement: Statement, sql: Prisma.Sql): Promise<string[]> {
  const problems: string[] = [];
  const described = await describe(client, sql.text);
  if (described.params.length !== sql.values.length) {
    problems.push(`${described.params.length} parameters in the text, ${sql.values.length} values given`);
  }
  if (statement.kind === "command") {
    if (described.fields) problems.push(`a command returns columns: ${described.fields.map((f) => f.name)}`);
    return problems;
  }
  const fields = described.fields ?? [];
  const { rows: types } = await client.query<{ oid: number; type: string }>(
    "SELECT oid::int, format_type(oid, NULL) AS type FROM pg_type WHERE oid = ANY($1)",
    [fields.map((f) => f.dataTypeID)],
  );
  const typeOf = new Map(types.map((t) => [t.oid, t.type]));
  const declared = Object.entries(statement.columns as Columns);
  const got = fields.map((f) => `${f.name} ${typeOf.get(f.dataTypeID)}`);
  const want = declared.map(([name, c]) => `${name} ${c.type}`);
  if (got.join(", ") !== want.join(", ")) {
    problems.push(`columns\n      declared: ${want.join(", ")}\n      returned: ${got.join(", ")}`);
    return problems;
  }
  // Plain columns of a table: declared as schema.prisma declares the field.
  for (const [i, f] of fields.entries()) {
    if (!f.tableID) continue;
    const { rows: [origin] } = await client.query<{ model: string; field: string }>(
      `SELECT c.relname AS model, a.attname AS field FROM pg_class c
         JOIN pg_attribute a ON a.attrelid = c.oid WHERE c.oid = $1 AND a.attnum = $2`,
      [f.tableID, f.columnID],
    );
    const field = PRISMA_COLUMNS.get(`${origin.model}.${origin.field}`);
    if (!field) continue; // not a schema.prisma table (pg-boss)
    const [name, c] = declared[i];
    if (field.type !== c.type) {
      problems.push(
        `${name}: ${c.type}, but schema.prisma's ${origin.model}.${origin.field} is ${field.type}`,
      );
    }
    if (field.optional && !c.nullable) {
      problems.push(
        `${name}: declared not null, but schema.prisma's ${origin.model}.${origin.field} is optional`,
      );
    }
  }
  return problems;
}

/** The SQL modules of src/ and their declared statements, by "path: export". */
async function declaredStatements(): Promise<Map<string, Statement>> {
  const found = new Map<string, Statement>();
  const walk = async (dir: string) => {
    for (const entry of Deno.readDirSync(dir)) {
      const path = join(dir, entry.name);
      if (entry.isDirectory && entry.name !== "generated") await walk(path);
      else if (entry.isFile && /(^|_)sql\.ts$/.test(entry.name)) {
        const module = await import(`file://${path}`);
        for (const [name, value] of Object.entries(module)) {
          if (isStatement(value)) found.set(`${relative(ROOT, path)}: ${name}`, value);
        }
      }
    }
  };
  await walk(join(ROOT, "src"));
  return found;
}

async function withClient<T>(f: (client: pg.Client, url: string) => Promise<T>): Promise<T> {
  const db = await createTestDatabase();
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    return await f(client, db.url);
  } finally {
    await client.end();
    await db.drop();
  }
}

Deno.test("every declared SQL statement is described by the migrated database as declared, in every shape", async () => {
  const statements = await declaredStatements();
  assert.ok(statements.size >= 10, `only ${statements.size} statements found`);
  await withClient(async (client) => {
    const problems: string[] = [];
    for (const [name, statement] of statements) {
      for (const [i, shape] of statement.shapes.entries()) {
        const label = statement.shapes.length > 1 ? `${name} (shape ${i + 1})` : name;
        try {
          for (const p of await check(client, statement, statement.sql(shape as never))) {
            problems.push(`${label}: ${p}`);
          }
        } catch (error) {
          problems.push(`${label}: ${(error as Error).message}`);
        }
      }
    }
    assert.deepEqual(problems, []);
  });
});

Deno.test("the event batch's statement with every listener's share is described as declared", async () => {
  await withClient(async (client, url) => {
    // The webhook listener's share holds pg-boss's insert of the delivery queue (its schema too).
    const jobs = new Jobs(url, silentLogger, { max: 1 });
    await jobs.start([webhookDeadLetterQueue, webhookDeliveryQueue]);
    try {
      const deps = {
        jobs,
        clock: { now: () => new Date(0) } as never,
        config: { groupingMs: { FAST: 1, MEDIUM: 2, SLOW: 3 } } as never,
      };
      const listeners = [
        webhookListener(deps.jobs),
        new LiveHub("postgres://unused", console as never).listener(),
        replyWindowListener(deps),
      ];
      const events: PublishedEvent[] = [{
        id: "e1",
        type: "message.received",
        workspaceId: "w",
        agentId: "a",
        conversationId: "c",
        data: { message: { id: "m" } },
        occurredAt: new Date(0),
      }];
      const shares = listeners.map((l) => l.statement!(events, client as never)!);
      assert.equal(shares.filter(Boolean).length, 3);
      assert.deepEqual(await check(client, publishBatch, publishBatch.sql({ shares })), []);
    } finally {
      await jobs.stop();
    }
  });
});

Deno.test("the check finds a wrong column name, type, order or nullability, and a wrong parameter count", async () => {
  const text = (now: Date) =>
    Prisma.sql`SELECT "key", "windowEnd" FROM "RateLimit" WHERE "windowEnd" <= ${now}`;
  const shapes = [new Date(0)] as const;
  const wrong = {
    name: query({ name: col.text, windowEnd: col.timestamptz }, text, shapes),
    type: query({ key: col.text, windowEnd: col.text }, text, shapes),
    order: query({ windowEnd: col.timestamptz, key: col.text }, text, shapes),
    missing: query({ key: col.text }, text, shapes),
    schema: query(
      { mediaSize: col.integer },
      () => Prisma.sql`SELECT "mediaSize" FROM "Message"`,
      [null],
    ),
    params: query(
      { key: col.text, windowEnd: col.timestamptz },
      (now: Date) => Prisma.sql`SELECT "key", "windowEnd" FROM "RateLimit" WHERE "windowEnd" <= ${now} OR $2`,
      shapes,
    ),
    rows: command(() => Prisma.sql`SELECT 1 AS one`, [null]),
  };
  await withClient(async (client) => {
    for (const [what, statement] of Object.entries(wrong)) {
      const problems = await check(client, statement, statement.sql(statement.shapes[0] as never))
        .catch((error) => [String(error)]);
      assert.ok(problems.length > 0, `a wrong ${what} went unnoticed`);
    }
    const right = query({ key: col.text, windowEnd: col.timestamptz }, text, shapes);
    assert.deepEqual(await check(client, right, right.sql(shapes[0])), []);
  });
});

Deno.test("the hot paths hold no SQL text of their own", () => {
  const files = [
    "src/conversations/receive.ts",
    "src/conversations/pipeline/reply.ts",
    "src/conversations/outbound.ts",
    "src/shared/events.ts",
    "src/supervisor/store.ts",
    "src/auth/rate_limit.ts",
  ];
  for (const file of files) {
    const source = Deno.readTextFileSync(join(ROOT, file));
    assert.doesNotMatch(source, /\$(queryRaw|executeRaw)(<[^`(]*>)?`|Prisma\.(sql|raw)\b/, file);
  }
});
