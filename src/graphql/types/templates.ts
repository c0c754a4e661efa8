/** The declared type of src/templates: a WhatsApp channel's message template. */
import { builder } from "../builder.ts";
import { typePlan } from "../declared.ts";

export const WhatsAppTemplate = builder.prismaObject("WhatsAppTemplate", {
  extensions: typePlan({ label: "Template" }),
  description: "A message template of the channel's WhatsApp Business Account, as Meta last described it.",
  fields: (t) => ({
    name: t.exposeString("name"),
    language: t.exposeString("language", { description: "Meta's language code (en_US, pt_BR...)." }),
    category: t.exposeString("category", { description: "MARKETING, UTILITY or AUTHENTICATION." }),
    status: t.exposeString("status", {
      description: "APPROVED (the only one that can be sent), PENDING, REJECTED, PAUSED, DISABLED...",
    }),
    components: t.expose("components", {
      type: "JSON",
      description: "Meta's components (HEADER, BODY, FOOTER, BUTTONS) with their {{parameters}}.",
    }),
    parameterFormat: t.exposeString("parameterFormat", {
      description: "POSITIONAL ({{1}}) or NAMED ({{first_name}}) parameters.",
    }),
  }),
});
