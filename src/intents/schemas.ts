import { z } from "zod";
import { enumType } from "../shared/view.ts";
import { text } from "../shared/validation.ts";
import { HttpMethod } from "../webhooks/schemas.ts";

export const MessageType = enumType(
  "MessageType",
  ["TEXT", "AUDIO", "IMAGE", "DOCUMENT"],
  "Message types an intent can be detected in.",
);

const requiredField = z.strictObject({
  name: z.string().trim().regex(
    /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/,
    "must be a tag attribute name (letters, digits, _ and -)",
  ),
  type: z.string().trim().min(1).max(50),
  description: z.string().trim().max(2000),
}).meta({ id: "RequiredField", description: "A field the model must fill in the intent's tag." });

const requiredFields = z.array(requiredField).max(50).refine(
  (fields) => new Set(fields.map((f) => f.name)).size === fields.length,
  "field names must be unique",
);
const triggerOnTypes = z.array(MessageType.schema).min(1).max(4)
  .transform((types) => [...new Set(types)]);

const fields = {
  name: text(100),
  description: text(2000),
  triggerOnTypes,
  requiredFields,
  webhookUrl: z.string().trim().max(2048),
  webhookMethod: HttpMethod.schema,
};

export const createIntentSchema = z.strictObject({
  ...fields,
  webhookMethod: fields.webhookMethod.default("POST").describe("POST (default), PUT or PATCH."),
});
export const updateIntentSchema = z.strictObject({
  name: fields.name.optional(),
  description: fields.description.optional(),
  triggerOnTypes: fields.triggerOnTypes.optional(),
  requiredFields: fields.requiredFields.optional(),
  webhookUrl: fields.webhookUrl.optional(),
  webhookMethod: fields.webhookMethod.optional(),
});
export type RequiredField = z.output<typeof requiredField>;
