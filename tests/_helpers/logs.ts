/** A logger for tests that keeps every line parsed and can wait for one to come. */
import { createLogger } from "../../src/shared/logger.ts";

// deno-lint-ignore no-explicit-any
export type LogLine = Record<string, any>;

export function logSink() {
  const lines: LogLine[] = [];
  const waiters: { match: (l: LogLine) => boolean; resolve: () => void }[] = [];
  const logger = createLogger("debug", (line) => {
    const parsed = JSON.parse(line);
    lines.push(parsed);
    for (const w of waiters) if (w.match(parsed)) w.resolve();
  });
  /** Resolves when a line matches (at once if one already did); rejects after 15 s as a backstop. */
  const waitFor = (match: (l: LogLine) => boolean) =>
    new Promise<void>((resolve, reject) => {
      if (lines.some(match)) return resolve();
      const failAfter = setTimeout(() => reject(new Error("log line never came")), 15_000);
      waiters.push({ match, resolve: () => (clearTimeout(failAfter), resolve()) });
    });
  const errors = () => lines.filter((l) => l.level === "error" || l.level === "warn");
  return { lines, logger, waitFor, errors };
}
