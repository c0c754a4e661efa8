/**
 * A WhatsApp template's slots as the console asks for them, read from Meta's components (HEADER,
 * BODY, FOOTER, BUTTONS; upper or lower case alike): a TEXT header's placeholder or a media header's
 * link, the body's {{1}}..{{n}} or {{name}}s, and the URL or COPY_CODE buttons' values. The values
 * become the API's `parameters` (`header`, `body` as a list or by name, `buttons` by index), and the
 * API's problems (`parameters.body.0`...) are matched back to the slot they name. The server checks
 * everything again; this only shapes the form.
 */

/** A template as the API lists it. */
export interface Template {
  name: string;
  language: string;
  category: string;
  status: string;
  components: unknown;
  parameterFormat: string;
}

/** One value to ask for. */
export interface Slot {
  /** Its place in `parameters` as the API's problems name it: `header`, `body.0`, `body.first_name`, `buttons.1`. */
  path: string;
  /** The placeholder it fills in the shown text (`1`, `first_name`), if it has one. */
  key: string | null;
  label: string;
  /** A link (a media header) or text. */
  kind: "text" | "link";
  /** Meta's example value, as a hint. */
  example: string | null;
}

/** The template's shape for the form: its texts, its slots, and what the console cannot fill. */
export interface TemplateShape {
  header: { text: string | null; format: string } | null;
  body: string;
  footer: string | null;
  buttons: string[];
  slots: Slot[];
  /** Parts the console has no input for (a LOCATION header, a carousel): such a template cannot be sent from here. */
  unsupported: string[];
}

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_]+)\s*\}\}/g;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === "object" && !Array.isArray(v);
const upper = (v: unknown) => (typeof v === "string" ? v.toUpperCase() : "");
const str = (v: unknown) => (typeof v === "string" ? v : null);
const isPositional = (key: string) => /^[1-9][0-9]*$/.test(key);

/** The distinct placeholders of `text`, in order of first appearance. */
export const placeholdersOf = (text: string): string[] => [
  ...new Set([...text.matchAll(PLACEHOLDER)].map((m) => m[1])),
];

/** `text` cut at its placeholders: strings, and `{ key }` where a placeholder stands. */
export function splitText(text: string): Array<string | { key: string }> {
  const parts: Array<string | { key: string }> = [];
  let at = 0;
  for (const m of text.matchAll(PLACEHOLDER)) {
    if (m.index! > at) parts.push(text.slice(at, m.index));
    parts.push({ key: m[1] });
    at = m.index! + m[0].length;
  }
  if (at < text.length) parts.push(text.slice(at));
  return parts;
}

/** Meta's example values of the body, by placeholder (`example.body_text` or `body_text_named_params`). */
function bodyExamples(body: Json | undefined): Map<string, string> {
  const out = new Map<string, string>();
  const example = isObject(body?.example) ? body!.example as Json : {};
  const positional = Array.isArray(example.body_text) ? example.body_text[0] : null;
  if (Array.isArray(positional)) positional.forEach((v, i) => str(v) && out.set(String(i + 1), v));
  const named = Array.isArray(example.body_text_named_params) ? example.body_text_named_params : [];
  for (const p of named.filter(isObject)) {
    const name = str(p.param_name);
    const value = str(p.example);
    if (name && value) out.set(name, value);
  }
  return out;
}

/** What the console shows and asks for of `template`. */
export function shapeOf(template: Template): TemplateShape {
  const components = Array.isArray(template.components) ? template.components.filter(isObject) : [];
  const find = (type: string) => components.find((c) => upper(c.type) === type);
  const slots: Slot[] = [];
  const unsupported: string[] = components
    .filter((c) => !["HEADER", "BODY", "FOOTER", "BUTTONS"].includes(upper(c.type)))
    .map((c) => `its ${String(c.type).toLowerCase()}`);

  const headerPart = find("HEADER");
  let header: TemplateShape["header"] = null;
  if (headerPart) {
    const format = upper(headerPart.format) || "TEXT";
    const text = str(headerPart.text);
    header = { text, format };
    if (format === "TEXT") {
      const [key] = placeholdersOf(text ?? "");
      const example = isObject(headerPart.example) && Array.isArray(headerPart.example.header_text)
        ? str(headerPart.example.header_text[0])
        : null;
      if (key) slots.push({ path: "header", key, label: `Header {{${key}}}`, kind: "text", example });
    } else if (format === "IMAGE" || format === "VIDEO" || format === "DOCUMENT") {
      const label = `Header ${format.toLowerCase()} (a public link)`;
      slots.push({ path: "header", key: null, label, kind: "link", example: null });
    } else {
      unsupported.push(`its ${format.toLowerCase()} header`);
    }
  }

  const bodyPart = find("BODY");
  const body = str(bodyPart?.text) ?? "";
  const keys = placeholdersOf(body);
  const byName = upper(template.parameterFormat) === "NAMED" || !keys.every(isPositional);
  const examples = bodyExamples(bodyPart);
  // POSITIONAL: Meta numbers them {{1}}..{{n}}, whatever the order they are used in.
  const ordered = byName ? keys : keys.map(Number).sort((a, b) => a - b).map(String);
  for (const key of ordered) {
    slots.push({
      path: byName ? `body.${key}` : `body.${Number(key) - 1}`,
      key,
      label: `{{${key}}}`,
      kind: "text",
      example: examples.get(key) ?? null,
    });
  }

  const buttonsPart = find("BUTTONS");
  const buttons = (Array.isArray(buttonsPart?.buttons) ? buttonsPart!.buttons as unknown[] : []).filter(
    isObject,
  );
  buttons.forEach((b, i) => {
    const type = upper(b.type);
    const text = str(b.text) ?? type.toLowerCase();
    const example = Array.isArray(b.example) ? str(b.example[0]) : str(b.example);
    const url = str(b.url) ?? "";
    if (type === "URL" && placeholdersOf(url).length && upper(template.category) !== "AUTHENTICATION") {
      // Meta's example is the whole link; the value is what replaces its {{1}} at the end.
      const start = url.slice(0, url.indexOf("{{"));
      const end = example?.startsWith(start) ? example.slice(start.length) : example;
      slots.push({
        path: `buttons.${i}`,
        key: null,
        label: `Button “${text}”: end of its link`,
        kind: "text",
        example: end,
      });
    } else if (type === "COPY_CODE") {
      slots.push({
        path: `buttons.${i}`,
        key: null,
        label: `Button “${text}”: the code`,
        kind: "text",
        example,
      });
    } else if (!["URL", "QUICK_REPLY", "PHONE_NUMBER", "VOICE_CALL", "OTP", "FLOW"].includes(type)) {
      unsupported.push(`its ${type.toLowerCase()} button`);
    }
  });

  return {
    header,
    body,
    footer: str(find("FOOTER")?.text),
    buttons: buttons.map((b) => str(b.text) ?? ""),
    slots,
    unsupported,
  };
}

/** The API's `parameters` for `values` (by slot path); parts without slots are left out. */
export function parametersOf(shape: TemplateShape, values: Record<string, string>) {
  const value = (s: Slot) => values[s.path] ?? "";
  const parameters: { header?: unknown; body?: unknown; buttons?: unknown } = {};
  const header = shape.slots.find((s) => s.path === "header");
  if (header) parameters.header = header.kind === "link" ? { link: value(header).trim() } : value(header);
  const body = shape.slots.filter((s) => s.path.startsWith("body."));
  if (body.length) {
    const named = body.some((s) => !isPositional(s.key ?? ""));
    parameters.body = named
      ? Object.fromEntries(body.map((s) => [s.key, value(s)]))
      : body.map((s) => value(s));
  }
  const buttons = shape.slots.filter((s) => s.path.startsWith("buttons."));
  if (buttons.length) {
    parameters.buttons = Object.fromEntries(buttons.map((s) => [s.path.slice(8), value(s)]));
  }
  return parameters;
}

/** The values by slot path of stored `parameters` (an agent's reminder template), for the form. */
export function valuesOf(shape: TemplateShape, parameters: unknown): Record<string, string> {
  const given = isObject(parameters) ? parameters : {};
  const values: Record<string, string> = {};
  for (const slot of shape.slots) {
    const [part, key] = slot.path.split(".");
    const v = part === "header"
      ? (isObject(given.header) ? given.header.link : given.header)
      : isObject(given[part]) || Array.isArray(given[part])
      ? (given[part] as Record<string, unknown>)[key]
      : undefined;
    if (typeof v === "string") values[slot.path] = v;
  }
  return values;
}

/** The value a placeholder `key` of the body shows: what was typed, or null. */
export function bodyValue(shape: TemplateShape, values: Record<string, string>, key: string): string | null {
  const slot = shape.slots.find((s) => s.path.startsWith("body.") && s.key === key);
  const v = slot ? values[slot.path] : undefined;
  return v ? v : null;
}

export interface FieldProblem {
  path: string;
  message: string;
}

/**
 * The API's problems (`parameters.body.0`, `parameters.header.link`...) by the slot they name;
 * those naming none (`parameters`, `parameters.body` for a count) under "".
 */
export function problemsBySlot(shape: TemplateShape, problems: FieldProblem[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const p of problems) {
    // `parameters.body.0` from a send, `reminderTemplate.parameters.body.0` from an agent's save.
    const path = p.path.replace(/^(.*\.)?parameters\.?/, "");
    const slot = shape.slots.find((s) => path === s.path || path.startsWith(`${s.path}.`));
    const key = slot?.path ?? "";
    out.set(key, [...(out.get(key) ?? []), p.message]);
  }
  return out;
}

/** `name language` as one value (a <select>'s), and back. */
export const templateKey = (t: { name: string; language: string }) => `${t.name}\u0000${t.language}`;
