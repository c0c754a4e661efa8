/**
 * A tiny structured logger: one JSON line per entry on stderr. Secrets are never passed to it;
 * `redact` masks the usual suspects anyway, in case a whole object is logged. While a request is
 * handled, every line written for it carries its `requestId` (from the request scope).
 */
import { currentScope } from "./request_scope.ts";

export type LogLevel = "debug" | "info" | "warn" | "error";
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };
const SECRET_KEYS = /pass(word)?|secret|token|authorization|api[-_]?key|credentials/i;

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export function redact(value: unknown, depth = 0): unknown {
  if (depth > 4 || value === null || typeof value !== "object") return value;
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = SECRET_KEYS.test(k) ? "[redacted]" : redact(v, depth + 1);
  }
  return out;
}

export function createLogger(level: LogLevel = "info", sink: (line: string) => void = console.error): Logger {
  const write = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[lvl] < ORDER[level]) return;
    const requestId = currentScope()?.requestId;
    sink(
      JSON.stringify({
        time: new Date().toISOString(),
        level: lvl,
        msg,
        ...(requestId === undefined ? {} : { requestId }),
        ...(redact(fields ?? {}) as object),
      }),
    );
  };
  return {
    debug: (m, f) => write("debug", m, f),
    info: (m, f) => write("info", m, f),
    warn: (m, f) => write("warn", m, f),
    error: (m, f) => write("error", m, f),
  };
}

/** A logger that drops everything (tests that do not care about logs). */
export const silentLogger: Logger = createLogger("error", () => {});
