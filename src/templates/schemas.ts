/** The shapes of src/templates' answers (docs/api.md "WhatsApp templates"). */
import { z } from "zod";

/** A template as the API shows it; the GraphQL type and OpenAPI schema are the WhatsAppTemplate view's. */
export const templateSchema = z.object({
  name: z.string(),
  language: z.string(),
  category: z.string(),
  status: z.string(),
  components: z.array(z.unknown()),
  parameterFormat: z.string(),
}).meta({ id: "WhatsAppTemplate" });

export const templateListSchema = z.object({ data: z.array(templateSchema) });
