/** The readable type of src/intents (see shared/view.ts) and the JSON objects of its requiredFields. */
import { declaredType, type JsonObjectType } from "../shared/view.ts";

export const RequiredFieldType: JsonObjectType = {
  name: "RequiredField",
  description: "A field the model must fill in the intent's tag; sent to the intent webhook.",
  fields: { name: { type: "String" }, type: { type: "String" }, description: { type: "String" } },
};

/** An intent: declared with Pothos (src/graphql/types/intents.ts). */
export const intentView = declaredType("Intent");
