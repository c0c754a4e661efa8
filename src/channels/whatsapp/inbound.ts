/**
 * The WhatsApp Cloud API `messages` webhook (Meta: "messages webhook reference", its text, image,
 * interactive, button, location and status pages) turned into the platform's records: customer
 * messages to store and status updates of messages already sent. Pure and transport-free: the
 * route verifies the signature (signature.ts), hands the body here and queues the records.
 *
 * A correctly signed post is never refused for what it carries: Meta resends refused posts, and
 * one post can carry several customers' messages, so one odd message must not cost the others.
 * Every message with a sender is kept: read into its type when its parts can be read, otherwise as
 * OTHER with its raw JSON (`unreadable` says why). What cannot be stored at all (no sender, a body
 * that is not JSON) is listed in `dropped` to be logged; statuses and changes that are not ours in
 * `skipped`. Nothing here throws, whatever the input.
 */
import { createHash } from "node:crypto";
import { cleanMimeType } from "../../shared/mime_type.ts";

/**
 * The stored message type. TEXT, AUDIO, IMAGE and DOCUMENT are the types an intent can trigger on (triggerOnTypes);
 * interactive and template-button replies are TEXT: the customer's choice is its title.
 */
export type InboundMessageType = "TEXT" | "AUDIO" | "IMAGE" | "DOCUMENT" | "LOCATION" | "OTHER";

/** A JSON object as parsed (strings already made storable, see `storable`). */
export type JsonObject = { [key: string]: JsonValue };
export type JsonValue = string | number | boolean | null | JsonValue[] | JsonObject;

export interface InboundMedia {
  /** Meta's media id (downloaded later through the Graph API, not by this module). */
  id: string;
  mimeType: string | null;
  caption: string | null;
  filename: string | null;
}

export interface InboundMessage {
  /**
   * The `wamid.…` id: the deduplication key (unique per channel). A message without a usable id
   * gets `sha256:<hex of its JSON>`, so a resent post is still stored once.
   */
  waMessageId: string;
  /** `metadata.phone_number_id` of the business number that received it; null when unreadable. */
  phoneNumberId: string | null;
  /** The customer's WhatsApp id (phone number), the contact's externalId. */
  from: string;
  /** The customer's profile name from `contacts`, or null when Meta sent none. */
  contactName: string | null;
  /** Meta's time of the message; null when unreadable (the platform stores its own time anyway). */
  timestamp: Date | null;
  /** WhatsApp's own type (`text`, `interactive`, `sticker`, …), kept for logs. */
  kind: string;
  type: InboundMessageType;
  /** What is stored as the message content and shown to the model: the text, or a placeholder. */
  content: string;
  /** The customer's own words: a text body or an interactive/button reply title; null otherwise. */
  text: string | null;
  media: InboundMedia | null;
  /** The option chosen in an interactive list/button or a template quick-reply button. */
  reply: { id: string; title: string } | null;
  location: { latitude: number; longitude: number; name: string | null; address: string | null } | null;
  /** Why the message could not be read (it is then OTHER); null when it was. */
  unreadable: string | null;
  /** The message as Meta sent it: OTHER messages keep it as their payload. */
  raw: JsonObject;
}

export type DeliveryState = "sent" | "delivered" | "read" | "failed";

export interface WhatsAppError {
  code: number | null;
  title: string;
  message: string | null;
  details: string | null;
}

export interface StatusUpdate {
  waMessageId: string;
  phoneNumberId: string | null;
  recipientId: string | null;
  status: DeliveryState;
  errors: WhatsAppError[];
  timestamp: Date | null;
  /** Meta's `pricing` of the message (a `sent` or `delivered` status carries it), or null. */
  pricing: { category: string; billable: boolean } | null;
}

/** Something of the post that cannot be stored at all: where, why, and a short excerpt to log. */
export interface Dropped {
  path: string;
  reason: string;
  excerpt: string;
}

/**
 * Meta's `message_template_status_update` change: a template of the business account (`entry[].id`,
 * the WABA id; the change names no phone number) was approved, rejected, paused...
 */
export interface TemplateStatusUpdate {
  businessAccountId: string;
  /** Meta's `event`, uppercased: APPROVED, REJECTED, PENDING, PAUSED, DISABLED, FLAGGED, REINSTATED... */
  event: string;
  name: string;
  language: string;
  metaId: string | null;
  reason: string | null;
}

export interface InboundParse {
  messages: InboundMessage[];
  statuses: StatusUpdate[];
  templateUpdates: TemplateStatusUpdate[];
  /** Errors Meta reports about the account or app (`value.errors`): to log, nothing to store. */
  accountErrors: WhatsAppError[];
  /** What was ignored by design and why (other `field`s, untracked status values). */
  skipped: string[];
  /** What could not be stored (no sender, not JSON): to log. */
  dropped: Dropped[];
}

// ---- reading JSON liberally ----

/** Deeper than this, a value is cut (PostgreSQL's jsonb and this module's recursion both have limits). */
const MAX_DEPTH = 64;
const TOO_DEEP = "[nested too deep]";
/** Ids and addresses are index keys: longer ones are not taken as given. */
const MAX_ID = 256;
const EXCERPT = 500;

/** A string PostgreSQL can store: NUL and unpaired surrogates become U+FFFD. */
function storableString(s: string): string {
  return (s.includes("\0") ? s.replaceAll("\0", "\uFFFD") : s).toWellFormed();
}

/** Parsed JSON with every string (and key) storable and nesting cut at MAX_DEPTH. */
export function storable(value: unknown, depth = 0): JsonValue {
  if (typeof value === "string") return storableString(value);
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (typeof value === "boolean" || value === null) return value;
  if (depth >= MAX_DEPTH) return TOO_DEEP;
  if (Array.isArray(value)) return value.map((v) => storable(v, depth + 1));
  if (typeof value === "object") {
    // fromEntries defines own keys, so a `__proto__` key stays data.
    return Object.fromEntries(
      Object.entries(value as object).map(([k, v]) => [storableString(k), storable(v, depth + 1)]),
    );
  }
  return null;
}

const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);
/** An array as it is, one object as a list of it, anything else as nothing. */
const list = (v: unknown): JsonValue[] => Array.isArray(v) ? v : isObject(v) ? [v] : [];
const text = (v: unknown): string | null => typeof v === "string" ? v : null;
/** An id: a non-empty string (or a number, as some senders write wa_ids) of at most MAX_ID characters. */
function idOf(v: unknown): string | null {
  const s = typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? String(v) : text(v);
  return s && s.length <= MAX_ID ? s : null;
}
/** Unix seconds as a string of digits or a number. */
function timeOf(v: unknown): Date | null {
  const n = typeof v === "number" ? v : typeof v === "string" && /^\d{1,12}$/.test(v) ? Number(v) : NaN;
  return Number.isFinite(n) && n >= 0 && n < 1e12 ? new Date(n * 1000) : null;
}
function numberOf(v: unknown): number | null {
  const n = typeof v === "number" ? v : typeof v === "string" && v.trim() !== "" ? Number(v) : NaN;
  return Number.isFinite(n) ? n : null;
}
function excerpt(v: unknown): string {
  const s = typeof v === "string" ? v : JSON.stringify(v) ?? String(v);
  return s.length > EXCERPT ? `${s.slice(0, EXCERPT)}…` : s;
}

const sha256Hex = (s: string) => createHash("sha256").update(s).digest("hex");

// ---- normalisation ----

const DELIVERY_STATES = new Set<string>(["sent", "delivered", "read", "failed"]);

function toError(e: JsonObject): WhatsAppError {
  const code = numberOf(e.code);
  const details = isObject(e.error_data) ? text(e.error_data.details) : null;
  return {
    code: code !== null && Number.isSafeInteger(code) ? code : null,
    title: text(e.title) ?? text(e.message) ?? "",
    message: text(e.message),
    details: details ?? text(e.details),
  };
}

/**
 * Meta's `pricing` object: its category (lowercased) and whether it is billable; null without one.
 * Meta deprecated `billable` with per-message pricing, where `type` says it instead (`regular` is
 * billed; `free_customer_service` and `free_entry_point` are not): `billable` when sent, else `type`.
 */
export function pricingOf(v: unknown): { category: string; billable: boolean } | null {
  if (!isObject(v)) return null;
  const category = text(v.category);
  if (category === null) return null;
  const type = text(v.type)?.toLowerCase();
  const billable = typeof v.billable === "boolean" ? v.billable : type === "regular";
  return { category: category.toLowerCase(), billable };
}

const errorsOf = (v: unknown) => list(v).filter(isObject).map(toError);

function mediaOf(part: unknown): InboundMedia | null {
  if (!isObject(part)) return null;
  const id = idOf(part.id);
  if (!id) return null;
  const mimeType = text(part.mime_type);
  return {
    id,
    mimeType: cleanMimeType(mimeType),
    caption: text(part.caption),
    filename: text(part.filename),
  };
}

/** `[kind]`, with a caption, file name or place after it when there is one. */
function placeholder(kind: string, detail?: string | null): string {
  const tag = `[${/^[a-z_]{1,32}$/.test(kind) ? kind : "unknown"}]`;
  return detail ? `${tag} ${detail}` : tag;
}

type Shape = Pick<InboundMessage, "type" | "content" | "text" | "media" | "reply" | "location">;
const NONE = { text: null, media: null, reply: null, location: null };
const other = (kind: string, rest: Partial<Shape> = {}): Shape => ({
  ...NONE,
  type: "OTHER",
  content: placeholder(kind),
  ...rest,
});

/** The type, content and parts of one message by WhatsApp's own type, or why it cannot be read. */
function shape(kind: string, m: JsonObject): Shape | string {
  const part = m[kind];
  switch (kind) {
    case "text": {
      const body = isObject(part) ? text(part.body) : null;
      return body === null
        ? "text.body is missing or not a string"
        : { ...NONE, type: "TEXT", content: body, text: body };
    }
    case "interactive": {
      if (!isObject(part)) return "interactive is missing or not an object";
      const choice = [part.button_reply, part.list_reply].find((r) => isObject(r) && text(r.title) !== null);
      // Other interactive kinds (flows' nfm_reply, …) carry no title to answer: kept whole as OTHER.
      if (!isObject(choice)) return other(text(part.type) || kind);
      const title = text(choice.title)!;
      const reply = { id: idOf(choice.id) ?? title, title };
      return { ...NONE, type: "TEXT", content: title, text: title, reply };
    }
    case "button": {
      const title = isObject(part) ? text(part.text) : null;
      if (title === null) return "button.text is missing or not a string";
      const reply = { id: text((part as JsonObject).payload) ?? title, title };
      return { ...NONE, type: "TEXT", content: title, text: title, reply };
    }
    case "audio":
    case "image":
    case "document": {
      const media = mediaOf(part);
      if (!media) return `${kind}.id is missing or not an id`;
      const detail = kind === "image"
        ? media.caption
        : kind === "document"
        ? media.caption ?? media.filename
        : null;
      const type = kind.toUpperCase() as "AUDIO" | "IMAGE" | "DOCUMENT";
      return { ...NONE, type, content: placeholder(kind, detail), media };
    }
    case "video":
    case "sticker": {
      const media = mediaOf(part);
      if (!media) return `${kind}.id is missing or not an id`;
      return other(kind, { content: placeholder(kind, media.caption), media });
    }
    case "location": {
      if (!isObject(part)) return "location is missing or not an object";
      const latitude = numberOf(part.latitude), longitude = numberOf(part.longitude);
      if (latitude === null || longitude === null || Math.abs(latitude) > 90 || Math.abs(longitude) > 180) {
        return "location.latitude or longitude is missing or out of range";
      }
      const location = { latitude, longitude, name: text(part.name), address: text(part.address) };
      const place = [location.name, location.address].filter(Boolean).join(", ") ||
        `${latitude}, ${longitude}`;
      return { ...NONE, type: "LOCATION", content: placeholder("location", place), location };
    }
    default:
      return `type ${excerpt(kind)} is not known`;
  }
}

/** The sender of `m`: its `from`, or the one contact of the change when it has none. */
function senderOf(m: JsonObject, contacts: JsonObject[]): string | null {
  if (m.from !== undefined) return idOf(m.from);
  return contacts.length === 1 ? idOf(contacts[0].wa_id) : null;
}

function readMessage(
  m: JsonObject,
  from: string,
  phoneNumberId: string | null,
  contacts: JsonObject[],
): InboundMessage {
  const contact = contacts.find((c) => idOf(c.wa_id) === from) ??
    (contacts.length === 1 ? contacts[0] : null);
  const name = contact && isObject(contact.profile)
    ? text(contact.profile.name)?.trim().slice(0, 1000)
    : null;
  const kind = text(m.type) ?? "";
  // Meta marks what it could not deliver whole (`unsupported`, a part it left out) with `errors`.
  const errors = Array.isArray(m.errors) && m.errors.length > 0;
  const read = errors ? "it carries errors" : kind ? shape(kind, m) : "type is missing or not a string";
  const unreadable = typeof read === "string" ? read : null;
  return {
    waMessageId: idOf(m.id) ?? `sha256:${sha256Hex(JSON.stringify([phoneNumberId, m]))}`,
    phoneNumberId,
    from,
    contactName: name || null,
    timestamp: timeOf(m.timestamp),
    kind,
    ...(typeof read === "string" ? other(kind || "unknown") : read),
    unreadable,
    raw: m,
  };
}

/** A `message_template_status_update` value (Meta's webhook reference), or null when unusable. */
function templateUpdateOf(entryId: unknown, value: unknown): TemplateStatusUpdate | null {
  if (!isObject(value)) return null;
  const businessAccountId = idOf(entryId);
  const event = text(value.event)?.trim().toUpperCase();
  const name = text(value.message_template_name)?.trim();
  const language = text(value.message_template_language)?.trim();
  if (!businessAccountId || !event || !name || !language) return null;
  const reason = text(value.reason)?.trim();
  return {
    businessAccountId,
    event,
    name,
    language,
    metaId: idOf(value.message_template_id),
    reason: reason && reason !== "NONE" ? reason : null,
  };
}

/**
 * One webhook body (already JSON-parsed) as inbound messages and status updates, in payload
 * order, with what was skipped or dropped and why. Never throws, never refuses.
 */
export function parseWebhookPayload(payload: unknown): InboundParse {
  const out: InboundParse = {
    messages: [],
    statuses: [],
    templateUpdates: [],
    accountErrors: [],
    skipped: [],
    dropped: [],
  };
  const root = storable(payload);
  // `object` is not checked: what the entries carry is read whatever it says.
  const entries = isObject(root) ? list(root.entry) : [];
  if (!entries.length) out.dropped.push({ path: "entry", reason: "no entries", excerpt: excerpt(root) });
  for (const [e, entry] of entries.entries()) {
    const changes = isObject(entry) ? list(entry.changes) : [];
    for (const [c, change] of changes.entries()) {
      const at = `entry.${e}.changes.${c}`;
      if (!isObject(change)) {
        out.dropped.push({ path: at, reason: "not an object", excerpt: excerpt(change) });
        continue;
      }
      if (change.field === "message_template_status_update") {
        const update = templateUpdateOf(isObject(entry) ? entry.id : null, change.value);
        if (update) out.templateUpdates.push(update);
        else {out.skipped.push(
            `template status ${excerpt(change.value)} has no account, name, language or event`,
          );}
        continue;
      }
      // A change without `field` is read as messages (it can only be what it carries).
      if (change.field !== undefined && change.field !== "messages") {
        out.skipped.push(`field ${excerpt(JSON.stringify(change.field))} is not handled`);
        continue;
      }
      const value = change.value;
      if (!isObject(value)) {
        out.dropped.push({ path: `${at}.value`, reason: "not an object", excerpt: excerpt(value) });
        continue;
      }
      // Unreadable metadata: the records are taken as the channel's (the URL and signature name it).
      const phoneNumberId = isObject(value.metadata) ? idOf(value.metadata.phone_number_id) : null;
      const contacts = list(value.contacts).filter(isObject);
      for (const [i, m] of list(value.messages).entries()) {
        const path = `${at}.value.messages.${i}`;
        const from = isObject(m) ? senderOf(m, contacts) : null;
        if (!isObject(m) || from === null) {
          out.dropped.push({
            path,
            reason: isObject(m) ? "no readable sender (from)" : "not an object",
            excerpt: excerpt(m),
          });
          continue;
        }
        out.messages.push(readMessage(m, from, phoneNumberId, contacts));
      }
      for (const s of list(value.statuses)) {
        const id = isObject(s) ? idOf(s.id) : null;
        const status = isObject(s) ? text(s.status) : null;
        if (!isObject(s) || id === null || status === null) {
          out.skipped.push(`status ${excerpt(s)} has no readable id or status`);
          continue;
        }
        if (!DELIVERY_STATES.has(status)) {
          out.skipped.push(`status ${JSON.stringify(status)} of ${id} is not tracked`);
          continue;
        }
        out.statuses.push({
          waMessageId: id,
          phoneNumberId,
          recipientId: idOf(s.recipient_id),
          status: status as DeliveryState,
          errors: errorsOf(s.errors),
          timestamp: timeOf(s.timestamp),
          pricing: pricingOf(s.pricing),
        });
      }
      out.accountErrors.push(...errorsOf(value.errors));
    }
  }
  return out;
}

/** The raw body of a post: its JSON read as above, or one `dropped` entry when it is not JSON. */
export function parseWebhookBody(body: string): InboundParse {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return {
      messages: [],
      statuses: [],
      templateUpdates: [],
      accountErrors: [],
      skipped: [],
      dropped: [{ path: "", reason: "the body is not JSON", excerpt: excerpt(storableString(body)) }],
    };
  }
  return parseWebhookPayload(json);
}
