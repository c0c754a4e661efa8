/**
 * The only reader of the environment. Every configuration variable (the README's
 * table) is parsed here once; a bad value stops the start with a message that
 * names every bad variable.
 */
import { z } from "zod";
import { allowlistProblems } from "./shared/outbound.ts";
import { decodeKey } from "./shared/secret_box.ts";
import { RETRY_BUDGET_MS } from "./llm/retry.ts";

const DURATION = /^(\d+)\s*(ms|s|m|h|d)?$/;
const UNIT_SECONDS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400 };

/** "12h", "30m", "90s", "3600" (seconds) -> seconds. */
function parseDuration(value: string): number | null {
  const m = DURATION.exec(value.trim());
  if (!m) return null;
  return Math.floor(Number(m[1]) * UNIT_SECONDS[m[2] ?? "s"]);
}

const optionalString = z.string().trim().min(1).optional();
const port = z.coerce.number().int().min(0).max(65535);
const positiveMs = z.coerce.number().int().min(1);
const price = z.coerce.number().min(0);

function badKey(ctx: z.RefinementCtx): never {
  ctx.addIssue({ code: "custom", message: "must be 32 random bytes in base64 (openssl rand -base64 32)" });
  return z.NEVER;
}

/** What one process runs: the HTTP API, the job workers, or both (several processes, one database). */
export const PROCESS_ROLES = ["all", "http", "workers"] as const;
export type ProcessRole = typeof PROCESS_ROLES[number];

const envSchema = z.object({
  PORT: port.default(8080),
  PROCESS_ROLE: z.string().trim().toLowerCase().pipe(
    z.enum(PROCESS_ROLES, { error: `must be one of ${PROCESS_ROLES.join(", ")}` }),
  ).default("all"),
  HOST: z.string().trim().min(1).default("127.0.0.1"),
  DATABASE_URL: z.string().trim().regex(/^postgres(ql)?:\/\//, "must be a postgres:// or postgresql:// URL")
    .optional(),
  DATA_DIR: z.string().trim().min(1).default("./.data"),
  EMBEDDED_PG_PORT: port.optional(),
  BOOTSTRAP_OWNER_EMAIL: z.string().trim().regex(/^[^\s@]+@[^\s@]+$/, "must be an email address").optional(),
  BOOTSTRAP_OWNER_PASSWORD: z.string().min(8, "must be at least 8 characters").optional(),
  BOOTSTRAP_WORKSPACE_NAME: optionalString,
  JWT_SECRET: z.string().refine((s) => new TextEncoder().encode(s).length >= 32, "must be at least 32 bytes")
    .optional(),
  SECRETS_KEY: z.string().transform((v, ctx) => decodeKey(v) ?? badKey(ctx)).optional(),
  SECRETS_KEY_PREVIOUS: z.string().default("").transform((v, ctx) =>
    v.split(",").map((s) => s.trim()).filter(Boolean).map((k) => decodeKey(k) ?? badKey(ctx))
  ),
  JWT_TTL: z.string().default("12h").transform((v, ctx) => {
    const seconds = parseDuration(v);
    if (seconds === null || seconds < 1) {
      ctx.addIssue({ code: "custom", message: "must be a duration such as 12h, 30m or 3600" });
      return z.NEVER;
    }
    return seconds;
  }),
  OPENAI_API_KEY: optionalString,
  OPENAI_BASE_URL: z.url().optional(),
  DEFAULT_MODEL: z.string().trim().min(1).default("gpt-4o-mini"),
  WHATSAPP_GRAPH_URL: z.url().default("https://graph.facebook.com/v21.0"),
  PUBLIC_URL: z.url().optional(),
  OUTBOUND_ALLOWLIST: z.string().default("").transform((v, ctx) => {
    const entries = v.split(",").map((s) => s.trim()).filter(Boolean);
    for (const problem of allowlistProblems(entries)) ctx.addIssue({ code: "custom", message: problem });
    return entries;
  }),
  INTENT_WEBHOOK_TIMEOUT_MS: positiveMs.default(30000),
  // The grouping windows are operator settings (the bench shortens them).
  GROUPING_FAST_MS: positiveMs.default(2000),
  GROUPING_MEDIUM_MS: positiveMs.default(5000),
  GROUPING_SLOW_MS: positiveMs.default(10000),
  LLM_TIMEOUT_MS: positiveMs.default(60000),
  // Media of WhatsApp messages (src/media/): what is fetched, how long it may take, how it is read.
  TRANSCRIPTION_MODEL: z.string().trim().min(1).default("whisper-1"),
  TRANSCRIPTION_TIMEOUT_MS: positiveMs.default(60000),
  MEDIA_WAIT_MS: z.coerce.number().int().min(0).default(30000),
  MEDIA_FETCH_TIMEOUT_MS: positiveMs.default(30000),
  MEDIA_MAX_AUDIO_BYTES: z.coerce.number().int().min(1).default(16 * 2 ** 20),
  MEDIA_MAX_IMAGE_BYTES: z.coerce.number().int().min(1).default(5 * 2 ** 20),
  MEDIA_MAX_DOCUMENT_BYTES: z.coerce.number().int().min(1).default(20 * 2 ** 20),
  DOCUMENT_MAX_CHARS: z.coerce.number().int().min(1).default(20000),
  DOCUMENT_TIMEOUT_MS: positiveMs.default(20000),
  DOCUMENT_MAX_HEAP_MB: z.coerce.number().int().min(16).default(256),
  REPLY_CLAIM_TTL_MS: positiveMs.optional(),
  // The supervisor's prices in USD per million tokens, and USD -> credits.
  SUPERVISOR_MODEL: optionalString,
  SUPERVISOR_PRICE_INPUT: price.default(3),
  SUPERVISOR_PRICE_OUTPUT: price.default(15),
  SUPERVISOR_PRICE_CACHE_WRITE: price.default(3.75),
  SUPERVISOR_PRICE_CACHE_READ: price.default(0.3),
  CREDITS_EXCHANGE_RATE: z.coerce.number().positive().default(5),
  CREDITS_MARKUP: z.coerce.number().positive().default(3),
  CREDIT_UNIT_PRICE: z.coerce.number().positive().default(0.1),
  // Replays of agent changes (src/replay/): conversations replayed (0: off), model calls at once.
  REPLAY_CONVERSATIONS: z.coerce.number().int().min(0).max(100).default(10),
  REPLAY_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(2).max(200).default(20),
  RETENTION_DAYS: z.coerce.number().int().min(1).default(30),
  LOG_LEVEL: z.enum(["debug", "info", "warn", "error"]).default("info"),
  APP_ENV: z.enum(["development", "production", "test"]).default("development"),
  // Nodes one GraphQL operation may return (src/graphql/limits.ts): a dashboard's 100 agents with
  // 100 intents and 100 webhooks each (20 100 nodes) fits; a third level of pages (a million) does not.
  GRAPHQL_MAX_COST: z.coerce.number().int().min(1).default(100_000),
  // Bytes of JSON one request's reads may answer (PostgreSQL's text stops at 1 GiB), and of large
  // answers the process holds at once.
  READ_MAX_RESPONSE_BYTES: z.coerce.number().int().min(1024).max(2 ** 30).default(32 * 2 ** 20),
  READ_MAX_BYTES_IN_FLIGHT: z.coerce.number().int().min(1024).default(128 * 2 ** 20),
  // Live feeds over graphql-ws (src/graphql/ws.ts); the socket counts are per server process.
  LIVE_MAX_SUBSCRIPTIONS_PER_SOCKET: z.coerce.number().int().min(1).default(100),
  LIVE_MAX_SOCKETS_PER_CREDENTIAL: z.coerce.number().int().min(1).default(100),
  LIVE_MAX_SOCKETS_PER_ADDRESS: z.coerce.number().int().min(1).default(1000),
  LIVE_CONNECTION_INIT_TIMEOUT_MS: positiveMs.default(3000),
  LIVE_KEEPALIVE_SECONDS: z.coerce.number().int().min(0).default(30),
  // A client that does not read its socket is closed once this much waits to be written to it.
  LIVE_MAX_BUFFERED_BYTES: z.coerce.number().int().min(1024).default(1024 * 1024),
  // Then its TCP connection is reset, unless the client took the close frame in the meantime.
  LIVE_SLOW_CONSUMER_GRACE_MS: positiveMs.default(2000),
  // Events waiting for one subscription's transport (SSE: a response nobody reads).
  LIVE_MAX_QUEUED_EVENTS: z.coerce.number().int().min(1).default(1000),
  CORS_ORIGINS: z.string().default("").transform((v, ctx) => {
    const origins = v.split(",").map((s) => s.trim()).filter(Boolean);
    for (const origin of origins) {
      // Browsers send an origin as scheme://host[:port], nothing more: anything else never matches.
      if (!URL.canParse(origin) || new URL(origin).origin !== origin) {
        ctx.addIssue({
          code: "custom",
          message: `"${origin}" is not an origin such as https://app.example.com`,
        });
      }
    }
    return origins;
  }),
});

export type Env = Record<string, string | undefined>;

export interface Config {
  /**
   * all: API and workers; http: the API only, every job left to other processes' workers;
   * workers: the workers only, the port answering GET /healthz and nothing else.
   */
  processRole: ProcessRole;
  port: number;
  host: string;
  /** Unset: the server starts an embedded PostgreSQL under `${dataDir}/postgres`. */
  databaseUrl?: string;
  dataDir: string;
  embeddedPgPort?: number;
  bootstrap: { email?: string; password?: string; workspaceName?: string };
  /** Unset: a secret is generated once and kept under dataDir (see db/bootstrap). */
  jwtSecret?: string;
  /** AES-256-GCM key of the secret box; unset: generated once under dataDir (see db/bootstrap). */
  secretsKey?: Uint8Array;
  /** Older keys, accepted to open values until `admin rotate-secrets` has resealed them. */
  secretsKeyPrevious: Uint8Array[];
  jwtTtlSeconds: number;
  openai: { apiKey?: string; baseUrl?: string; defaultModel: string };
  whatsappGraphUrl: string;
  publicUrl: string;
  outboundAllowlist: string[];
  intentWebhookTimeoutMs: number;
  /** Grouping window per messageGroupingTime, in ms (defaults 2 s, 5 s, 10 s). */
  groupingMs: { FAST: number; MEDIUM: number; SLOW: number };
  /** One model call (reply pipeline, supervisor) waits at most this long. */
  llmTimeoutMs: number;
  /** WhatsApp media (src/media/): fetching, transcription and document text. */
  media: {
    transcriptionModel: string;
    transcriptionTimeoutMs: number;
    /** The reply to a window waits at most this long beyond the window for its media work. */
    waitMs: number;
    /** One Graph API call (the media's description, then its bytes) waits at most this long. */
    fetchTimeoutMs: number;
    /** Larger files are not downloaded (the message keeps `media.error`). */
    maxBytes: { AUDIO: number; IMAGE: number; DOCUMENT: number };
    /** Document text: at most this many characters, this long, this much heap (src/media/documents.ts). */
    document: { maxChars: number; timeoutMs: number; maxHeapMb: number };
  };
  /**
   * A reply's claim on its conversation older than this is a dead process': another job takes the
   * conversation over. Default: the longest reply (the model call, four intent calls) plus a minute.
   */
  replyClaimTtlMs: number;
  /**
   * The supervisor's model (default DEFAULT_MODEL) and what a message costs:
   * USD per million tokens of each kind, then credits = usd x exchangeRate x markup / unitPrice.
   */
  supervisor: {
    model: string;
    prices: { input: number; output: number; cacheWrite: number; cacheRead: number };
    exchangeRate: number;
    markup: number;
    unitPrice: number;
  };
  /**
   * Replays of agent changes (src/replay/): the agent's latest `conversations` with an AI reply
   * (0: replay off), and at most `concurrency` model calls in flight per server process.
   */
  replay: { conversations: number; concurrency: number };
  /** Connections of the app's Prisma pool (opened as needed): the workers' transactions and the requests share it. */
  databasePoolSize: number;
  /** Events and their deliveries older than this many days are removed (hourly). */
  retentionDays: number;
  logLevel: "debug" | "info" | "warn" | "error";
  appEnv: "development" | "production" | "test";
  /** Nodes one GraphQL operation may return (src/graphql/limits.ts). */
  graphqlMaxCost: number;
  /** Byte budgets of read answers (src/reads/budget.ts). */
  reads: { maxResponseBytes: number; maxBytesInFlight: number };
  /** Origins allowed to call the API from a browser; empty: no CORS headers at all. */
  corsOrigins: string[];
  /** graphql-ws limits (src/graphql/ws.ts); socket counts are per server process. */
  live: {
    maxSubscriptionsPerSocket: number;
    maxSocketsPerCredential: number;
    maxSocketsPerAddress: number;
    /** A socket without `connection_init` this long is closed with 4408. */
    connectionInitTimeoutMs: number;
    /**
     * A quiet socket gets a graphql-ws ping every half of this; one that answers nothing and takes
     * nothing queued for it for this long is closed with 1001 (src/graphql/ws.ts). 0: no pings.
     */
    keepaliveSeconds: number;
    /** Bytes queued on one socket (written but not yet sent); beyond them it is closed with 1013. */
    maxBufferedBytes: number;
    /** How long a socket closed with 1013 may take to go; then its TCP connection is reset. */
    slowConsumerGraceMs: number;
    /** Events waiting for one subscription; beyond them the subscription ends (LIVE_SLOW_CONSUMER). */
    maxQueuedEvents: number;
  };
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

/** Parse an environment (normally `Deno.env.toObject()`); throws ConfigError listing every problem. */
export function loadConfig(env: Env): Config {
  // Empty strings count as unset, as shells and compose files produce them.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = envSchema.safeParse(cleaned);
  const problems = parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
  // Several processes share an external database: each generating its own keys would break them.
  if (cleaned.DATABASE_URL) {
    for (const name of ["JWT_SECRET", "SECRETS_KEY"]) {
      if (!cleaned[name]) problems.push(`${name}: is required when DATABASE_URL is set`);
    }
  }
  if (!parsed.success || problems.length) throw new ConfigError(problems);
  const e = parsed.data;
  return {
    processRole: e.PROCESS_ROLE,
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    dataDir: e.DATA_DIR,
    embeddedPgPort: e.EMBEDDED_PG_PORT,
    bootstrap: {
      email: e.BOOTSTRAP_OWNER_EMAIL,
      password: e.BOOTSTRAP_OWNER_PASSWORD,
      workspaceName: e.BOOTSTRAP_WORKSPACE_NAME,
    },
    jwtSecret: e.JWT_SECRET,
    secretsKey: e.SECRETS_KEY,
    secretsKeyPrevious: e.SECRETS_KEY_PREVIOUS,
    jwtTtlSeconds: e.JWT_TTL,
    openai: { apiKey: e.OPENAI_API_KEY, baseUrl: e.OPENAI_BASE_URL, defaultModel: e.DEFAULT_MODEL },
    whatsappGraphUrl: e.WHATSAPP_GRAPH_URL.replace(/\/+$/, ""),
    publicUrl: (e.PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, ""),
    outboundAllowlist: e.OUTBOUND_ALLOWLIST,
    intentWebhookTimeoutMs: e.INTENT_WEBHOOK_TIMEOUT_MS,
    groupingMs: { FAST: e.GROUPING_FAST_MS, MEDIUM: e.GROUPING_MEDIUM_MS, SLOW: e.GROUPING_SLOW_MS },
    llmTimeoutMs: e.LLM_TIMEOUT_MS,
    media: {
      transcriptionModel: e.TRANSCRIPTION_MODEL,
      transcriptionTimeoutMs: e.TRANSCRIPTION_TIMEOUT_MS,
      waitMs: e.MEDIA_WAIT_MS,
      fetchTimeoutMs: e.MEDIA_FETCH_TIMEOUT_MS,
      maxBytes: {
        AUDIO: e.MEDIA_MAX_AUDIO_BYTES,
        IMAGE: e.MEDIA_MAX_IMAGE_BYTES,
        DOCUMENT: e.MEDIA_MAX_DOCUMENT_BYTES,
      },
      document: {
        maxChars: e.DOCUMENT_MAX_CHARS,
        timeoutMs: e.DOCUMENT_TIMEOUT_MS,
        maxHeapMb: e.DOCUMENT_MAX_HEAP_MB,
      },
    },
    replyClaimTtlMs: e.REPLY_CLAIM_TTL_MS ??
      e.LLM_TIMEOUT_MS + RETRY_BUDGET_MS + 4 * e.INTENT_WEBHOOK_TIMEOUT_MS + 60_000,
    supervisor: {
      model: e.SUPERVISOR_MODEL ?? e.DEFAULT_MODEL,
      prices: {
        input: e.SUPERVISOR_PRICE_INPUT,
        output: e.SUPERVISOR_PRICE_OUTPUT,
        cacheWrite: e.SUPERVISOR_PRICE_CACHE_WRITE,
        cacheRead: e.SUPERVISOR_PRICE_CACHE_READ,
      },
      exchangeRate: e.CREDITS_EXCHANGE_RATE,
      markup: e.CREDITS_MARKUP,
      unitPrice: e.CREDIT_UNIT_PRICE,
    },
    replay: { conversations: e.REPLAY_CONVERSATIONS, concurrency: e.REPLAY_CONCURRENCY },
    databasePoolSize: e.DATABASE_POOL_SIZE,
    retentionDays: e.RETENTION_DAYS,
    logLevel: e.LOG_LEVEL,
    appEnv: e.APP_ENV,
    graphqlMaxCost: e.GRAPHQL_MAX_COST,
    reads: {
      maxResponseBytes: e.READ_MAX_RESPONSE_BYTES,
      // At least one answer of the largest size fits.
      maxBytesInFlight: Math.max(e.READ_MAX_BYTES_IN_FLIGHT, e.READ_MAX_RESPONSE_BYTES),
    },
    corsOrigins: e.CORS_ORIGINS,
    live: {
      maxSubscriptionsPerSocket: e.LIVE_MAX_SUBSCRIPTIONS_PER_SOCKET,
      maxSocketsPerCredential: e.LIVE_MAX_SOCKETS_PER_CREDENTIAL,
      maxSocketsPerAddress: e.LIVE_MAX_SOCKETS_PER_ADDRESS,
      connectionInitTimeoutMs: e.LIVE_CONNECTION_INIT_TIMEOUT_MS,
      keepaliveSeconds: e.LIVE_KEEPALIVE_SECONDS,
      maxBufferedBytes: e.LIVE_MAX_BUFFERED_BYTES,
      slowConsumerGraceMs: e.LIVE_SLOW_CONSUMER_GRACE_MS,
      maxQueuedEvents: e.LIVE_MAX_QUEUED_EVENTS,
    },
  };
}
