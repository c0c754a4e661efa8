/**
 * A WhatsApp template's parameters checked against its components, and the send payload built from
 * them (pure: no database, no network). The components are Meta's, as `GET /{waba}/message_templates`
 * returns them (HEADER, BODY, FOOTER, BUTTONS; upper or lower case taken alike); the payload is the
 * `template` object of Meta's send call ("Send message templates",
 * https://developers.facebook.com/docs/whatsapp/cloud-api/guides/send-message-templates), built only
 * when every placeholder has a value of its kind and no value is left over: Meta's 132000 (parameter
 * count mismatch) and 132018 (a parameter with a newline, a tab or more than four spaces in a row)
 * are caught here, before Meta sees the message. A component or button this cannot fill (a carousel,
 * a catalog button) is a problem too, rather than a guess.
 */
import { z } from "zod";
import type { FieldProblem } from "../shared/errors.ts";

/** One text value (a body or header placeholder, a button's URL suffix or code). */
const value = z.string().max(1024);

/**
 * What a caller gives for a template's placeholders: `header` (a TEXT header's value, a media
 * header's `link`, a LOCATION header's place), `body` (POSITIONAL: the values of {{1}}..{{n}} in
 * order; NAMED: `{ name: value }`), `buttons` (by the button's index in the template: an array, null
 * where a button takes nothing, or `{ "2": value }`).
 */
export const templateParametersSchema = z.strictObject({
  header: z.union([
    value,
    z.strictObject({
      link: z.string().max(2048).describe("A media header's file: a public http(s) URL."),
      filename: z.string().max(240).optional().describe("A DOCUMENT header's file name."),
    }),
    z.strictObject({
      latitude: z.number().min(-90).max(90),
      longitude: z.number().min(-180).max(180),
      name: z.string().max(1000).optional(),
      address: z.string().max(1000).optional(),
    }),
  ]).optional().describe(
    "A TEXT header's value, a media (IMAGE, VIDEO, DOCUMENT) header's { link, filename? }, or a LOCATION " +
      "header's { latitude, longitude, name?, address? }.",
  ),
  body: z.union([z.array(value).max(100), z.record(z.string().max(100), value)]).optional().describe(
    "POSITIONAL templates: the values of {{1}}..{{n}} in order; NAMED: { name: value }.",
  ),
  buttons: z.union([z.array(value.nullable()).max(10), z.record(z.string().max(2), value)]).optional()
    .describe(
      "By the button's index in the template: a URL button's suffix, a COPY_CODE button's code, an " +
        "authentication template's code (defaults to the body's), a QUICK_REPLY button's payload (optional); " +
        "null or absent for buttons that take nothing.",
    ),
}).meta({ id: "TemplateParameters" });

export type TemplateParameters = z.output<typeof templateParametersSchema>;

/** A template to send by name and language, with its parameters (an agent's reminderTemplate too). */
export const templateChoiceSchema = z.strictObject({
  name: z.string().trim().min(1).max(512).describe("The template's name, as Meta lists it."),
  language: z.string().trim().min(1).max(20).describe("Its language and locale code (`en_US`, `pt_BR`)."),
  parameters: templateParametersSchema.default({}),
});

export type TemplateChoice = z.output<typeof templateChoiceSchema>;

/** A stored template: its row's columns that matter here. */
export interface StoredTemplate {
  name: string;
  language: string;
  category: string;
  /** Meta's components, as synced. */
  components: unknown;
  /** POSITIONAL ({{1}}) or NAMED ({{first_name}}). */
  parameterFormat: string;
}

/** A value of Meta's send payload's `parameters`. */
export type GraphParameter =
  | { type: "text"; text: string; parameter_name?: string }
  | { type: "image"; image: { link: string } }
  | { type: "video"; video: { link: string } }
  | { type: "document"; document: { link: string; filename?: string } }
  | { type: "location"; location: { latitude: number; longitude: number; name?: string; address?: string } }
  | { type: "coupon_code"; coupon_code: string }
  | { type: "payload"; payload: string };

export type GraphComponent =
  | { type: "header" | "body"; parameters: GraphParameter[] }
  | {
    type: "button";
    sub_type: "url" | "copy_code" | "quick_reply";
    index: string;
    parameters: GraphParameter[];
  };

/** The `template` object of Meta's send call. */
export interface GraphTemplate {
  name: string;
  language: { code: string };
  /** Left out when the template has nothing to fill (as Meta's hello_world example). */
  components?: GraphComponent[];
}

export type BuiltTemplate =
  | {
    ok: true;
    /** What Meta receives as `template`. */
    template: GraphTemplate;
    /** The body's text with the values in it (the stored message's content). */
    content: string;
  }
  | { ok: false; problems: FieldProblem[] };

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_]+)\s*\}\}/g;

/** The distinct placeholders of `text`, in order of first appearance. */
export function placeholdersOf(text: string): string[] {
  return [...new Set([...text.matchAll(PLACEHOLDER)].map((m) => m[1]))];
}

/** `text` with each placeholder replaced by its value (unknown ones left as they are). */
const fill = (text: string, values: ReadonlyMap<string, string>) =>
  text.replace(PLACEHOLDER, (whole, key: string) => values.get(key) ?? whole);

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === "object" && !Array.isArray(v);
const upper = (v: unknown) => (typeof v === "string" ? v.toUpperCase() : "");
const isPositional = (key: string) => /^[1-9][0-9]*$/.test(key);
const describe = (keys: string[]) => keys.map((k) => `{{${k}}}`).join(", ");

/** Meta's 132018: a text parameter must not hold a newline, a tab or more than four spaces in a row. */
const badText = (text: string): string | null =>
  text.trim() === ""
    ? "must not be empty"
    : /[\n\r\t]/.test(text)
    ? "must not contain newlines or tabs (WhatsApp refuses them)"
    : / {5}/.test(text)
    ? "must not contain more than four spaces in a row (WhatsApp refuses them)"
    : null;

/** A media header's link: a public http(s) URL Meta fetches. */
function badLink(link: string): string | null {
  try {
    const url = new URL(link);
    return url.protocol === "https:" || url.protocol === "http:" ? null : "must be an http(s) URL";
  } catch {
    return "must be an http(s) URL";
  }
}

/**
 * Checks `parameters` against the template's components (number, names and kinds) and builds the
 * send payload and the stored content, or answers every problem found (each with the path of the
 * parameter at fault).
 */
export function buildTemplateMessage(
  template: StoredTemplate,
  parameters: Partial<Record<keyof TemplateParameters, unknown>> = {},
): BuiltTemplate {
  const problems: FieldProblem[] = [];
  const problem = (path: string, message: string) => problems.push({ path: `parameters${path}`, message });
  const components = Array.isArray(template.components) ? template.components.filter(isObject) : [];
  const named = upper(template.parameterFormat) === "NAMED";
  const out: GraphComponent[] = [];
  const find = (type: string) => components.find((c) => upper(c.type) === type);
  for (const c of components) {
    if (!["HEADER", "BODY", "FOOTER", "BUTTONS"].includes(upper(c.type))) {
      problem("", `the template's ${String(c.type)} component cannot be sent from here`);
    }
  }

  // The header: text with at most one placeholder, media, or a place.
  const header = find("HEADER");
  const headerValue = parameters.header;
  if (header) {
    const format = upper(header.format) || "TEXT";
    if (format === "TEXT") {
      const keys = placeholdersOf(typeof header.text === "string" ? header.text : "");
      const [key] = keys;
      if (!key) {
        if (headerValue !== undefined) problem(".header", "the template's header takes no parameter");
      } else if (typeof headerValue !== "string") {
        problem(".header", `the header's ${describe(keys)} needs a text value`);
      } else {
        const bad = badText(headerValue);
        if (bad) problem(".header", bad);
        else {out.push({
            type: "header",
            parameters: [textParameter(key, headerValue, named || !isPositional(key))],
          });}
      }
    } else if (format === "IMAGE" || format === "VIDEO" || format === "DOCUMENT") {
      const media = typeof headerValue === "string" ? { link: headerValue } : headerValue;
      const link = isObject(media) ? media.link : undefined;
      if (typeof link !== "string") {
        problem(".header", `the template's ${format} header needs { link } (a public http(s) URL)`);
      } else if (badLink(link)) {
        problem(".header.link", badLink(link)!);
      } else if (format === "DOCUMENT") {
        const filename = isObject(media) && typeof media.filename === "string" ? media.filename : undefined;
        out.push({
          type: "header",
          parameters: [{ type: "document", document: { link, ...(filename ? { filename } : {}) } }],
        });
      } else {
        const type = format === "IMAGE" ? "image" : "video";
        out.push({
          type: "header",
          parameters: [type === "image" ? { type, image: { link } } : { type, video: { link } }],
        });
      }
    } else if (format === "LOCATION") {
      const place = isObject(headerValue) ? headerValue : {};
      const latitude = Number(place.latitude);
      const longitude = Number(place.longitude);
      if (
        place.latitude === undefined || place.longitude === undefined || !Number.isFinite(latitude) ||
        !Number.isFinite(longitude)
      ) {
        problem(".header", "the template's LOCATION header needs { latitude, longitude, name?, address? }");
      } else {
        const extra = Object.fromEntries(
          (["name", "address"] as const).flatMap((k) => typeof place[k] === "string" ? [[k, place[k]]] : []),
        );
        out.push({
          type: "header",
          parameters: [{ type: "location", location: { latitude, longitude, ...extra } }],
        });
      }
    } else {
      problem(".header", `the template's ${format} header cannot be sent from here`);
    }
  } else if (headerValue !== undefined) {
    problem(".header", "the template has no header");
  }

  // The body: every placeholder once, POSITIONAL in order or NAMED by name.
  const body = find("BODY");
  const bodyText = body && typeof body.text === "string" ? body.text : "";
  const keys = placeholdersOf(bodyText);
  // NAMED as the template says, or as its placeholders show.
  const byName = named || !keys.every(isPositional);
  const bodyValues = new Map<string, string>();
  const bodyProblems = problems.length;
  // Nothing given: every placeholder is missing (named), or 0 values were given (positional).
  const given = parameters.body ?? (byName ? {} : []);
  if (!keys.length) {
    const empty = given === undefined || (Array.isArray(given) && !given.length) ||
      (isObject(given) && !Object.keys(given).length);
    if (!empty) problem(".body", "the template's body takes no parameters");
  } else if (byName) {
    if (!isObject(given)) {
      problem(".body", `the body takes named parameters: { ${keys.map((k) => `"${k}": "..."`).join(", ")} }`);
    } else {
      for (const key of keys) {
        const v = given[key];
        if (typeof v !== "string") problem(`.body.${key}`, `the body's {{${key}}} needs a text value`);
        else bodyValues.set(key, v);
      }
      for (const key of Object.keys(given)) {
        if (!keys.includes(key)) {
          problem(`.body.${key}`, `the body has no {{${key}}} (it has ${describe(keys)})`);
        }
      }
    }
  } else {
    // {{1}}..{{n}}: Meta numbers them in order, so n values are expected, whatever the order of use.
    const count = Math.max(...keys.map(Number));
    const list = Array.isArray(given)
      ? given
      : isObject(given) && Object.keys(given).every(isPositional)
      ? Array.from({ length: Math.max(count, ...Object.keys(given).map(Number)) }, (_, i) =>
        given[String(i + 1)])
      : null;
    if (!list) {
      problem(".body", `the body takes ${count} positional parameter(s), {{1}}..{{${count}}}: a list`);
    } else if (list.length !== count) {
      problem(".body", `the body takes ${count} parameter(s) ({{1}}..{{${count}}}); ${list.length} given`);
    } else {
      list.forEach((v, i) => {
        if (typeof v !== "string") problem(`.body.${i}`, `the body's {{${i + 1}}} needs a text value`);
        else bodyValues.set(String(i + 1), v);
      });
    }
  }
  for (const [key, v] of bodyValues) {
    const bad = badText(v);
    if (bad) problem(`.body.${byName ? key : Number(key) - 1}`, bad);
  }
  if (keys.length && problems.length === bodyProblems) {
    const ordered = byName ? keys : [...bodyValues.keys()];
    out.push({ type: "body", parameters: ordered.map((k) => textParameter(k, bodyValues.get(k)!, byName)) });
  }

  // The buttons, by their index in the template.
  const buttons = find("BUTTONS");
  const list = buttons && Array.isArray(buttons.buttons) ? buttons.buttons.filter(isObject) : [];
  const values = buttonValues(parameters.buttons, problem);
  const authentication = upper(template.category) === "AUTHENTICATION";
  // An authentication template's code button carries the body's code (Meta: "the same one-time password").
  const code = bodyValues.get(keys[0]);
  list.forEach((button, i) => {
    const index = String(i);
    const v = values.get(i);
    values.delete(i);
    const path = `.buttons.${i}`;
    const type = upper(button.type);
    const urlKeys = type === "URL" ? placeholdersOf(typeof button.url === "string" ? button.url : "") : [];
    if (type === "OTP" || (type === "URL" && urlKeys.length && authentication)) {
      const text = v ?? code;
      if (text === undefined) problem(path, "the code button needs the code (or the body's)");
      else out.push({ type: "button", sub_type: "url", index, parameters: [{ type: "text", text }] });
    } else if (type === "URL" && urlKeys.length) {
      if (v === undefined) {
        problem(path, `the URL button's ${describe(urlKeys)} needs a value (the URL's end)`);
      } else if (badText(v)) problem(path, badText(v)!);
      else out.push({ type: "button", sub_type: "url", index, parameters: [{ type: "text", text: v }] });
    } else if (type === "COPY_CODE") {
      // Meta's coupon templates: "Only accepting alphanumeric characters", at most 15.
      if (v === undefined) problem(path, "the COPY_CODE button needs its code");
      else if (!/^[A-Za-z0-9]{1,15}$/.test(v)) problem(path, "a coupon code is 1 to 15 letters or digits");
      else {
        out.push({
          type: "button",
          sub_type: "copy_code",
          index,
          parameters: [{ type: "coupon_code", coupon_code: v }],
        });
      }
    } else if (type === "QUICK_REPLY") {
      // Optional: without one, Meta sends the button's text back when it is tapped.
      if (v !== undefined) {
        out.push({
          type: "button",
          sub_type: "quick_reply",
          index,
          parameters: [{ type: "payload", payload: v }],
        });
      }
    } else if (["URL", "PHONE_NUMBER", "VOICE_CALL", "FLOW"].includes(type)) {
      if (v !== undefined) problem(path, `the ${type} button takes no parameter`);
    } else {
      problem(path, `the template's ${String(button.type)} button cannot be sent from here`);
    }
  });
  for (const i of values.keys()) problem(`.buttons.${i}`, `the template has no button ${i}`);

  if (problems.length) return { ok: false, problems };
  return {
    ok: true,
    template: {
      name: template.name,
      language: { code: template.language },
      ...(out.length ? { components: out } : {}),
    },
    content: bodyText ? fill(bodyText, bodyValues) : template.name,
  };
}

function textParameter(key: string, text: string, named: boolean): GraphParameter {
  return named ? { type: "text", parameter_name: key, text } : { type: "text", text };
}

/** The buttons' values by index (an array with nulls, or `{ "index": value }`). */
function buttonValues(given: unknown, problem: (path: string, message: string) => void): Map<number, string> {
  const out = new Map<number, string>();
  if (given === undefined || given === null) return out;
  const entries: Array<[string, unknown]> = Array.isArray(given)
    ? given.map((v, i) => [String(i), v])
    : isObject(given)
    ? Object.entries(given)
    : [];
  if (!Array.isArray(given) && !isObject(given)) problem(".buttons", "a list of values by button index");
  for (const [key, v] of entries) {
    if (v === null || v === undefined) continue;
    if (!/^(0|[1-9][0-9]?)$/.test(key)) problem(`.buttons.${key}`, "a button index (0, 1, ...)");
    else if (typeof v !== "string") problem(`.buttons.${key}`, "a text value");
    else out.set(Number(key), v);
  }
  return out;
}
