/**
 * System prompts generated from an agent's template on create. Both are a customer-support
 * attendant: SUPORTE in Portuguese (the default, as its name), SUPPORT the same in English.
 */
export const TEMPLATES = ["SUPORTE", "SUPPORT"] as const;
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

function support(f: TemplateFields): string {
  const company = f.jobName ? `of ${f.jobName}` : "of the company";
  const lines = [
    `You are ${f.name}, a customer support attendant ${company}.`,
    f.jobSite ? `Company website: ${f.jobSite}.` : null,
    f.jobDescription ? `About the company: ${f.jobDescription}` : null,
    "",
    "How to help:",
    "- Answer politely, clearly and to the point, in short messages.",
    "- Use only the information in this prompt and in the training context; do not make anything up.",
    "- When you cannot solve something, say you will hand the conversation to a human attendant.",
    f.trainingContext ? `\nTraining context:\n${f.trainingContext}` : null,
  ];
  return lines.filter((l) => l !== null).join("\n");
}

const RENDERERS: Record<Template, (f: TemplateFields) => string> = { SUPORTE: suporte, SUPPORT: support };

export function renderSystemPrompt(template: Template, fields: TemplateFields): string {
  return RENDERERS[template](fields);
}
