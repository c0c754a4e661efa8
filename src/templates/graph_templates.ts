/**
 * A business account's message templates through the Graph API (Meta: "WhatsApp Business Account >
 * Message Templates" reference): `GET {WHATSAPP_GRAPH_URL}/{wabaId}/message_templates`, page after
 * page by `paging.next`, with the channel's access token and through the app's pinned outbound
 * client. One sync, one outcome: a failure comes back classified, never thrown.
 */
import {
  classifyGraphError,
  GRAPH_TIMEOUT_MS,
  type OutboundRequest,
} from "../channels/whatsapp/graph_api.ts";
import { OutboundRefused } from "../shared/outbound.ts";
import { unlessAborted } from "../shared/abort.ts";
import { Deadline } from "../shared/deadline.ts";

/** A template as Meta describes it, read liberally. */
export interface MetaTemplate {
  name: string;
  language: string;
  /** MARKETING, UTILITY, AUTHENTICATION (uppercased as Meta sends them). */
  category: string;
  /** APPROVED, PENDING, REJECTED, PAUSED, DISABLED... */
  status: string;
  /** Meta's components (HEADER, BODY, FOOTER, BUTTONS), as it sent them. */
  components: unknown[];
  parameterFormat: "POSITIONAL" | "NAMED";
  metaId: string | null;
}

export interface TemplateFetchFailure {
  /** The Graph API's HTTP status, or 0 when no answer came. */
  status: number;
  /** One line, safe to store and show (never the token). */
  message: string;
  retryable: boolean;
}

export type Fetched =
  | { ok: true; templates: MetaTemplate[]; pages: number }
  | { ok: false; error: TemplateFetchFailure };

/** The fields asked for; `limit` is the most Meta gives per page. */
const FIELDS = "id,name,language,status,category,components,parameter_format";
const PAGE_SIZE = 100;
/** A paging loop (a `next` that never ends) stops here: 2 000 pages of 100 is far beyond Meta's cap. */
const MAX_PAGES = 2000;

const oneLine = (text: string) => text.replace(/\s+/g, " ").trim().slice(0, 500);
const str = (v: unknown): string | null => typeof v === "string" && v.trim() !== "" ? v.trim() : null;

/** One entry of `data`, or null when it has no name or language (nothing could send it). */
export function readTemplate(entry: unknown): MetaTemplate | null {
  if (!entry || typeof entry !== "object" || Array.isArray(entry)) return null;
  const t = entry as Record<string, unknown>;
  const name = str(t.name);
  const language = str(t.language);
  if (!name || !language) return null;
  const format = str(t.parameter_format)?.toUpperCase();
  const id = typeof t.id === "number" ? String(t.id) : str(t.id);
  return {
    name,
    language,
    category: str(t.category)?.toUpperCase() ?? "UNKNOWN",
    status: str(t.status)?.toUpperCase() ?? "UNKNOWN",
    components: Array.isArray(t.components) ? t.components : [],
    parameterFormat: format === "NAMED" ? "NAMED" : "POSITIONAL",
    metaId: id,
  };
}

/**
 * Every template of the business account, following `paging.next` to the last page. A `next` that
 * leaves the Graph API's origin is not followed (the token goes only to the Graph API).
 */
export async function fetchTemplates(
  request: OutboundRequest,
  input: { graphUrl: string; businessAccountId: string; accessToken: string },
  options: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<Fetched> {
  const origin = new URL(input.graphUrl).origin;
  const headers = new Headers({ authorization: `Bearer ${input.accessToken}` });
  const templates: MetaTemplate[] = [];
  let url: string | null =
    `${input.graphUrl}/${encodeURIComponent(input.businessAccountId)}/message_templates?` +
    new URLSearchParams({ fields: FIELDS, limit: String(PAGE_SIZE) });
  let pages = 0;
  const seen = new Set<string>();
  while (url !== null) {
    if (pages >= MAX_PAGES || seen.has(url)) {
      return fail(0, `paging did not end after ${pages} pages`, false);
    }
    seen.add(url);
    const page = await fetchPage(request, url, headers, options);
    if (!page.ok) return page;
    pages++;
    for (const entry of page.data) {
      const template = readTemplate(entry);
      if (template) templates.push(template);
    }
    url = page.next && sameOrigin(page.next, origin) ? page.next : null;
  }
  return { ok: true, templates, pages };
}

const fail = (status: number, message: string, retryable: boolean) => ({
  ok: false as const,
  error: { status, message, retryable },
});

function sameOrigin(next: string, origin: string): boolean {
  try {
    return new URL(next).origin === origin;
  } catch {
    return false;
  }
}

async function fetchPage(
  request: OutboundRequest,
  url: string,
  headers: Headers,
  options: { timeoutMs?: number; signal?: AbortSignal },
): Promise<{ ok: true; data: unknown[]; next: string | null } | ReturnType<typeof fail>> {
  const timeoutMs = options.timeoutMs ?? GRAPH_TIMEOUT_MS;
  const deadline = new Deadline(timeoutMs, options.signal);
  const signal = deadline.signal;
  try {
    const res = await unlessAborted(request(url, { method: "GET", headers, signal }), signal);
    const text = await unlessAborted(res.text(), signal);
    if (res.status < 200 || res.status >= 300) {
      const error = classifyGraphError(res.status, text);
      return fail(res.status, error.message, error.retryable);
    }
    let body: { data?: unknown; paging?: { next?: unknown } } | null = null;
    try {
      body = JSON.parse(text);
    } catch { /* handled below */ }
    if (!body || typeof body !== "object" || !Array.isArray(body.data)) {
      return fail(res.status, "Graph API answer has no template list (data)", false);
    }
    return { ok: true, data: body.data, next: str(body.paging?.next) };
  } catch (error) {
    if (options.signal?.aborted && !deadline.timedOut) throw options.signal.reason;
    if (deadline.timedOut) return fail(0, `timed out after ${timeoutMs} ms`, true);
    if (error instanceof OutboundRefused) return fail(0, `refused: ${error.message}`, false);
    const text = error instanceof Error ? error.message : String(error);
    return fail(0, oneLine(text) || "connection failed", true);
  } finally {
    deadline.clear();
  }
}
