/**
 * System prompts generated from an agent's template on create. SUPORTE is a customer-support
 * attendant (the only template); its text is Portuguese like its name.
 */
export const TEMPLATES = ["SUPORTE"] as const;
export type Template = typeof TEMPLATES[number];

export interface TemplateFields {
  name: string;
  jobName?: string | null;
  jobSite?: string | null;
  jobDescription?: string | null;
  trainingContext?: string | null;
}

function suporte(f: TemplateFields): string {
  const company = f.jobName ? `da empresa ${f.jobName}` : "da empresa";
  const lines = [
    `Você é ${f.name}, atendente de suporte ao cliente ${company}.`,
    f.jobSite ? `Site da empresa: ${f.jobSite}.` : null,
    f.jobDescription ? `Sobre a empresa: ${f.jobDescription}` : null,
    "",
    "Como atender:",
    "- Responda com cordialidade, clareza e objetividade, em mensagens curtas.",
    "- Use apenas as informações deste prompt e do contexto de treinamento; não invente dados.",
    "- Quando não souber resolver, diga que vai encaminhar para um atendente humano.",
    f.trainingContext ? `\nContexto de treinamento:\n${f.trainingContext}` : null,
  ];
  return lines.filter((l) => l !== null).join("\n");
}

const RENDERERS: Record<Template, (f: TemplateFields) => string> = { SUPORTE: suporte };

export function renderSystemPrompt(template: Template, fields: TemplateFields): string {
  return RENDERERS[template](fields);
}
