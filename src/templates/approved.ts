/**
 * The template a send names, as it may go out: an APPROVED template of the channel (by name and
 * language, as synced from Meta), its parameters checked against its components and Meta's send
 * payload built (./parameters.ts). Used by the template sends (./send.ts) and by the reminder
 * outside the window (conversations/timers.ts), which skips it when this refuses.
 */
import type { Deps } from "../context.ts";
import { AppError } from "../shared/errors.ts";
import type { TemplateObject } from "../channels/whatsapp/graph_api.ts";
import { buildTemplateMessage, type TemplateChoice } from "./parameters.ts";

/** A template ready to store and send. */
export interface ApprovedTemplate {
  name: string;
  language: string;
  /** Meta's `template` object, sent as it is by every attempt. */
  send: TemplateObject;
  /** The body with its values filled in: the message's content. */
  content: string;
}

/**
 * The channel's template `choice` names, checked: 422 TEMPLATE_NOT_APPROVED when the channel has
 * no such template or it is not APPROVED, 422 TEMPLATE_PARAMETERS (every problem in `errors`) when
 * the parameters do not fit it. Reads one row; sends nothing.
 */
export async function approvedTemplate(
  deps: Pick<Deps, "db">,
  channelId: string,
  choice: TemplateChoice,
): Promise<ApprovedTemplate> {
  // Meta writes locales with an underscore (pt_BR); a hyphen (pt-BR) names the same one.
  const languages = [...new Set([choice.language, choice.language.replace("-", "_")])];
  const rows = await deps.db.whatsAppTemplate.findMany({
    where: { channelId, name: choice.name, language: { in: languages } },
    select: {
      name: true,
      language: true,
      category: true,
      status: true,
      components: true,
      parameterFormat: true,
    },
  });
  const template = rows.find((r) => r.language === choice.language) ?? rows[0];
  if (!template) {
    throw new AppError(
      "TEMPLATE_NOT_APPROVED",
      422,
      `The channel has no template "${choice.name}" in ${choice.language} (sync its templates, or check the name and language).`,
    );
  }
  if (template.status.toUpperCase() !== "APPROVED") {
    throw new AppError(
      "TEMPLATE_NOT_APPROVED",
      422,
      `Template "${template.name}" (${template.language}) is ${template.status}; only an APPROVED template can be sent.`,
    );
  }
  const built = buildTemplateMessage(template, choice.parameters);
  if (!built.ok) {
    const summary = built.problems.map((p) => `${p.path}: ${p.message}`).join("; ");
    throw new AppError(
      "TEMPLATE_PARAMETERS",
      422,
      `The parameters do not fit template "${template.name}" (${template.language}): ${summary}`,
      built.problems,
    );
  }
  return { name: template.name, language: template.language, send: built.template, content: built.content };
}
