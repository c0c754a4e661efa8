/** The readable type of src/templates: a WhatsApp channel's message template (see shared/view.ts). */
import { declaredType } from "../shared/view.ts";

/** A template: declared with Pothos (src/graphql/types/templates.ts). */
export const templateView = declaredType("WhatsAppTemplate");
