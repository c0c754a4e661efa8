/**
 * The WhatsApp Cloud API `messages` webhook (Meta: "messages webhook reference", its text, image,
 * interactive, button, location and status pages) turned into the platform's records: customer
 * messages to store and status updates of messages already sent. Pure and transport-free: the
 * route verifies the signature (signature.ts), hands the parsed JSON here and queues the records.
 *
 * Tolerant where Meta may grow: unknown fields are dropped, unknown message types are kept as
 * OTHER with a placeholder such as `[video]`, unknown status values and non-`messages` fields are
 * skipped with a reason. Strict where storing would go wrong: a payload whose envelope, ids,
 * timestamps or known message parts are malformed is refused as a whole with field problems, so
 * nothing of it is half-stored; strings PostgreSQL cannot store (NUL, unpaired surrogates) too.
 */
import { z } from "zod";
import type { FieldProblem } from "../../shared/errors.ts";

/**
 * The stored message type. TEXT, AUDIO, IMAGE and DOCUMENT are the spec's (intent triggerOnTypes);
 * LOCATION and OTHER are not in prisma's MessageType yet (the conversations work adds them).
 * Interactive and template-button replies are TEXT: the customer's choice is its title.
 */
export type InboundMessageType = "TEXT" | "AUDIO" | "IMAGE" | "DOCUMENT" | "LOCATION" | "OTHER";

export interface InboundMedia {
  /** Meta's media id (downloaded later through the Graph API, not by this module). */
  id: string;
  mimeType: string | null;
  caption: string | null;
  filename: string | null;
}

export interface InboundMessage {
  /** The `wamid.…` id: the deduplication key (unique per channel). */
  waMessageId: string;
  /** `metadata.phone_number_id` of the business number that received it. */
  phoneNumberId: string;
  /** The customer's WhatsApp id (phone number), the contact's externalId. */
  from: string;
  /** The customer's profile name from `contacts`, or null when Meta sent none. */
  contactName: string | null;
  timestamp: Date;
  /** WhatsApp's own type (`text`, `interactive`, `sticker`, …), kept for logs and later types. */
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
}

export type DeliveryState = "sent" | "delivered" | "read" | "failed";

export interface WhatsAppError {
  code: number;
  title: string;
  message: string | null;
  details: string | null;
}

export interface StatusUpdate {
  waMessageId: string;
  phoneNumberId: string;
  recipientId: string | null;
  status: DeliveryState;
  errors: WhatsAppError[];
  timestamp: Date;
}

export type InboundParse =
  | {
    ok: true;
    messages: InboundMessage[];
    statuses: StatusUpdate[];
    /** Errors Meta reports about the account or app (`value.errors`): to log, nothing to store. */
    accountErrors: WhatsAppError[];
    /** What was ignored and why (unknown fields of `changes`, unknown status values). */
    skipped: string[];
  }
  | { ok: false; problems: FieldProblem[] };

// ---- schemas: only what is read; z.object drops every other field ----

const storable = (s: string) => !s.includes("\0") && s.isWellFormed();
const UNSTORABLE = "must not contain NUL characters or unpaired surrogates";
/** A string the database can store, at most `max` characters. */
const str = (max: number) => z.string().max(max).refine(storable, UNSTORABLE);
const id = str(256).min(1);
/** Unix seconds, which Meta sends as a string of digits (a number is taken too). */
const unixSeconds = z.union([z.string().regex(/^\d{1,12}$/, "must be Unix seconds"), z.number().int().min(0)])
  .transform((s) => new Date(Number(s) * 1000));
/** WhatsApp's text limit is 4096; a little room so a longer one is stored, not refused. */
const body = str(65_536);

const errorSchema = z.object({
  code: z.number().int(),
  title: str(1000).optional(),
  message: str(2000).optional(),
  error_data: z.object({ details: str(4000).optional() }).optional(),
});

const mediaSchema = z.object({
  id,
  mime_type: str(255).optional(),
  caption: body.optional(),
  filename: str(1000).optional(),
});

const replySchema = z.object({ id: str(1000), title: str(1000) });

/** The parts of a message read per known type; a present but malformed part refuses the payload. */
const knownParts = {
  text: z.object({ body }),
  image: mediaSchema,
  audio: mediaSchema,
  document: mediaSchema,
  video: mediaSchema,
  sticker: mediaSchema,
  interactive: z.object({
    type: str(64),
    button_reply: replySchema.optional(),
    list_reply: replySchema.optional(),
  }),
  button: z.object({ text: str(1000), payload: str(1000).optional() }),
  location: z.object({
    latitude: z.number().min(-90).max(90),
    longitude: z.number().min(-180).max(180),
    name: str(1000).optional(),
    address: str(2000).optional(),
  }),
} as const;
type KnownKind = keyof typeof knownParts;

const messageSchema = z.object({
  from: id,
  id,
  timestamp: unixSeconds,
  type: str(64).min(1),
  ...Object.fromEntries(Object.entries(knownParts).map(([k, s]) => [k, s.optional()])) as {
    [K in KnownKind]: z.ZodOptional<typeof knownParts[K]>;
  },
}).superRefine((m, ctx) => {
  // A known type must carry its part (a `text` message without `text` has nothing to store).
  if (Object.hasOwn(knownParts, m.type) && m[m.type as KnownKind] === undefined) {
    ctx.addIssue({ code: "custom", path: [m.type], message: `is required for a ${m.type} message` });
  }
});

const statusSchema = z.object({
  id,
  status: str(64),
  timestamp: unixSeconds,
  recipient_id: str(256).optional(),
  errors: z.array(errorSchema).max(100).optional(),
});

const valueSchema = z.object({
  metadata: z.object({ phone_number_id: id }),
  contacts: z.array(
    z.object({ wa_id: str(256).optional(), profile: z.object({ name: str(1000) }).optional() }),
  )
    .max(1000).optional(),
  messages: z.array(messageSchema).max(1000).optional(),
  statuses: z.array(statusSchema).max(1000).optional(),
  errors: z.array(errorSchema).max(100).optional(),
});

const changeSchema = z.object({ field: str(64), value: z.unknown() });

export const webhookPayloadSchema = z.object({
  object: z.literal("whatsapp_business_account"),
  entry: z.array(z.object({ id: str(256).optional(), changes: z.array(changeSchema).max(1000) })).max(1000),
});

// ---- normalisation ----

const DELIVERY_STATES = new Set<string>(["sent", "delivered", "read", "failed"]);

function toError(e: z.output<typeof errorSchema>): WhatsAppError {
  return {
    code: e.code,
    title: e.title ?? e.message ?? "",
    message: e.message ?? null,
    details: e.error_data?.details ?? null,
  };
}

function toMedia(m: z.output<typeof mediaSchema>): InboundMedia {
  return {
    id: m.id,
    mimeType: m.mime_type ?? null,
    caption: m.caption ?? null,
    filename: m.filename ?? null,
  };
}

/** `[kind]`, with a caption, file name or place after it when there is one. */
function placeholder(kind: string, detail?: string | null): string {
  const tag = `[${/^[a-z_]{1,32}$/.test(kind) ? kind : "unknown"}]`;
  return detail ? `${tag} ${detail}` : tag;
}

type ParsedMessage = z.output<typeof messageSchema>;
type Shape = Pick<InboundMessage, "type" | "content" | "text" | "media" | "reply" | "location">;
const NONE = { text: null, media: null, reply: null, location: null };

/** The type, content and parts of one message, by WhatsApp's own type. */
function shape(m: ParsedMessage): Shape {
  switch (m.type) {
    case "text":
      return { ...NONE, type: "TEXT", content: m.text!.body, text: m.text!.body };
    case "interactive": {
      const reply = m.interactive!.button_reply ?? m.interactive!.list_reply;
      // Other interactive kinds (flows' nfm_reply, …) carry no title to answer.
      if (!reply) {
        return { ...NONE, type: "OTHER", content: placeholder(m.interactive!.type || "interactive") };
      }
      return { ...NONE, type: "TEXT", content: reply.title, text: reply.title, reply };
    }
    case "button": {
      const b = m.button!;
      const reply = { id: b.payload ?? b.text, title: b.text };
      return { ...NONE, type: "TEXT", content: b.text, text: b.text, reply };
    }
    case "audio":
      return { ...NONE, type: "AUDIO", content: placeholder("audio"), media: toMedia(m.audio!) };
    case "image":
      return {
        ...NONE,
        type: "IMAGE",
        content: placeholder("image", m.image!.caption),
        media: toMedia(m.image!),
      };
    case "document": {
      const d = m.document!;
      return {
        ...NONE,
        type: "DOCUMENT",
        content: placeholder("document", d.caption ?? d.filename),
        media: toMedia(d),
      };
    }
    case "video":
    case "sticker": {
      const media = m[m.type]!;
      return { ...NONE, type: "OTHER", content: placeholder(m.type, media.caption), media: toMedia(media) };
    }
    case "location": {
      const l = m.location!;
      const place = [l.name, l.address].filter(Boolean).join(", ") || `${l.latitude}, ${l.longitude}`;
      return {
        ...NONE,
        type: "LOCATION",
        content: placeholder("location", place),
        location: {
          latitude: l.latitude,
          longitude: l.longitude,
          name: l.name ?? null,
          address: l.address ?? null,
        },
      };
    }
    default:
      return { ...NONE, type: "OTHER", content: placeholder(m.type) };
  }
}

function problems(error: z.ZodError, prefix: Array<string | number> = []): FieldProblem[] {
  return error.issues.map((issue) => ({
    path: [...prefix, ...issue.path].map(String).join("."),
    message: issue.message,
  }));
}

/**
 * One webhook body (already JSON-parsed) as inbound messages and status updates, in payload
 * order; or, when it is malformed, `ok: false` with every problem and its dotted path. Never throws.
 */
export function parseWebhookPayload(payload: unknown): InboundParse {
  const envelope = webhookPayloadSchema.safeParse(payload);
  if (!envelope.success) return { ok: false, problems: problems(envelope.error) };
  const messages: InboundMessage[] = [];
  const statuses: StatusUpdate[] = [];
  const accountErrors: WhatsAppError[] = [];
  const skipped: string[] = [];
  const bad: FieldProblem[] = [];
  envelope.data.entry.forEach((entry, e) =>
    entry.changes.forEach((change, c) => {
      if (change.field !== "messages") {
        skipped.push(`field ${JSON.stringify(change.field)} is not handled`);
        return;
      }
      const parsed = valueSchema.safeParse(change.value);
      if (!parsed.success) {
        bad.push(...problems(parsed.error, ["entry", e, "changes", c, "value"]));
        return;
      }
      const value = parsed.data;
      const phoneNumberId = value.metadata.phone_number_id;
      const contacts = value.contacts ?? [];
      for (const m of value.messages ?? []) {
        const contact = contacts.find((x) => x.wa_id === m.from) ??
          (contacts.length === 1 ? contacts[0] : null);
        messages.push({
          waMessageId: m.id,
          phoneNumberId,
          from: m.from,
          contactName: contact?.profile?.name || null,
          timestamp: m.timestamp,
          kind: m.type,
          ...shape(m),
        });
      }
      for (const s of value.statuses ?? []) {
        if (!DELIVERY_STATES.has(s.status)) {
          skipped.push(`status ${JSON.stringify(s.status)} of ${s.id} is not tracked`);
          continue;
        }
        statuses.push({
          waMessageId: s.id,
          phoneNumberId,
          recipientId: s.recipient_id ?? null,
          status: s.status as DeliveryState,
          errors: (s.errors ?? []).map(toError),
          timestamp: s.timestamp,
        });
      }
      accountErrors.push(...(value.errors ?? []).map(toError));
    })
  );
  if (bad.length) return { ok: false, problems: bad };
  return { ok: true, messages, statuses, accountErrors, skipped };
}
