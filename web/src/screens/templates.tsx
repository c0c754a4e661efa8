/// <reference lib="dom" />
/**
 * Choosing a WhatsApp template and filling its parameters: a "Template" picker of the channel's
 * APPROVED templates, the chosen one's header, body (its slots shown as {{1}} or {{name}} until
 * filled), footer and buttons, and one input per slot, each with the API's problems next to it.
 * Used to send one on a conversation outside the window and for an agent's reminder template.
 */
import { useState } from "preact/hooks";
import { graphql, type ResultOf } from "../schema.ts";
import {
  bodyValue,
  type FieldProblem,
  problemsBySlot,
  shapeOf,
  splitText,
  type Template,
  templateKey,
  type TemplateShape,
} from "../templates.ts";

export const TemplateFields = graphql(`fragment ConsoleTemplate on WhatsAppTemplate {
  name language category status components parameterFormat
}`);

export type ListedTemplate = ResultOf<typeof TemplateFields>;

/** The templates that can be sent: Meta approved them. */
export const approved = (list: readonly ListedTemplate[]): ListedTemplate[] =>
  list.filter((t) => t.status === "APPROVED");

/** A template chosen, and the values typed for its slots (by slot path). */
export interface TemplateChoice {
  template: Template | null;
  values: Record<string, string>;
}

export const NO_CHOICE: TemplateChoice = { template: null, values: {} };

/** The API's field problems of an error (`extensions.errors`), if it has any. */
export function fieldProblems(
  error: { graphQLErrors: { extensions?: Record<string, unknown> }[] } | undefined,
) {
  const errors = error?.graphQLErrors[0]?.extensions?.errors;
  return Array.isArray(errors)
    ? errors.filter((e): e is FieldProblem => typeof e?.path === "string" && typeof e?.message === "string")
    : [];
}

let forms = 0;

/**
 * The picker and the chosen template's inputs. `none` names the empty choice ("None" for a
 * reminder); `problems` are the API's answer to the last attempt.
 */
export function TemplatePicker(
  { templates, choice, onChoice, problems = [], none = "Choose a template", disabled = false }: {
    templates: readonly Template[];
    choice: TemplateChoice;
    onChoice: (choice: TemplateChoice) => void;
    problems?: FieldProblem[];
    none?: string;
    disabled?: boolean;
  },
) {
  const [id] = useState(() => `template-${++forms}`);
  const shape = choice.template ? shapeOf(choice.template) : null;
  const byslot = shape ? problemsBySlot(shape, problems) : new Map<string, string[]>();
  // A stored choice Meta no longer approves (a reminder) stays shown as it is, marked.
  const gone = choice.template && !templates.some((t) => templateKey(t) === templateKey(choice.template!))
    ? choice.template
    : null;
  const pick = (key: string) => {
    const template = templates.find((t) => templateKey(t) === key) ??
      (gone && templateKey(gone) === key ? gone : null);
    onChoice({ template, values: template === choice.template ? choice.values : {} });
  };
  return (
    <div class="template-picker">
      <label>
        Template
        <select
          value={choice.template ? templateKey(choice.template) : ""}
          onChange={(e) => pick((e.target as HTMLSelectElement).value)}
          disabled={disabled}
        >
          <option value="">{none}</option>
          {templates.map((t) => (
            <option key={templateKey(t)} value={templateKey(t)}>{t.name} ({t.language})</option>
          ))}
          {gone && <option value={templateKey(gone)}>{gone.name} ({gone.language}), not approved</option>}
        </select>
      </label>
      {gone && <p class="error">{gone.name} ({gone.language}) is no longer an approved template.</p>}
      {shape && !gone && <TemplatePreview shape={shape} values={choice.values} />}
      {shape?.unsupported.length
        ? <p class="error">This template cannot be filled here ({shape.unsupported.join(", ")}).</p>
        : null}
      {shape?.slots.map((slot, i) => {
        const found = byslot.get(slot.path) ?? [];
        const problemId = `${id}-problem-${i}`;
        return (
          <div class="slot" key={slot.path}>
            <label>
              {slot.label}
              <input
                inputMode={slot.kind === "link" ? "url" : undefined}
                value={choice.values[slot.path] ?? ""}
                placeholder={slot.example ?? undefined}
                required
                disabled={disabled}
                aria-invalid={found.length ? "true" : undefined}
                aria-describedby={found.length ? problemId : undefined}
                onInput={(e) =>
                  onChoice({
                    template: choice.template,
                    values: { ...choice.values, [slot.path]: (e.target as HTMLInputElement).value },
                  })}
              />
            </label>
            {found.length > 0 && <p class="error" id={problemId}>{found.join("; ")}</p>}
          </div>
        );
      })}
      {(byslot.get("") ?? []).map((message) => <p class="error" role="alert" key={message}>{message}</p>)}
    </div>
  );
}

/** The template as the customer will read it, the slots filled so far (text only: never markup). */
function TemplatePreview({ shape, values }: { shape: TemplateShape; values: Record<string, string> }) {
  const headerValue = values.header;
  return (
    <div class="template-preview" role="group" aria-label="Preview">
      {shape.header && (
        <p class="template-header">
          {shape.header.text !== null
            ? <Filled text={shape.header.text} value={() => headerValue || null} />
            : `[${shape.header.format.toLowerCase()}]`}
        </p>
      )}
      <p class="template-body">
        <Filled text={shape.body} value={(key) => bodyValue(shape, values, key)} />
      </p>
      {shape.footer && <p class="muted">{shape.footer}</p>}
      {shape.buttons.length > 0 && (
        <ul class="template-buttons">
          {shape.buttons.map((b, i) => <li key={i}>{b}</li>)}
        </ul>
      )}
    </div>
  );
}

function Filled({ text, value }: { text: string; value: (key: string) => string | null }) {
  return (
    <>
      {splitText(text).map((part, i) => {
        if (typeof part === "string") return part;
        const v = value(part.key);
        return v !== null
          ? <span key={i} class="filled">{v}</span>
          : <mark key={i}>{`{{${part.key}}}`}</mark>;
      })}
    </>
  );
}
